"""The controller: observe envelopes, decide bounded actions, guard them, hand them on."""
