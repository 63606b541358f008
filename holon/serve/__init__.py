"""Serve: `holon serve` receives webhook deliveries on loopback and hands them to the controller."""
