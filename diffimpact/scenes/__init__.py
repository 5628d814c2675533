"""Ready-made systems from the papers."""
