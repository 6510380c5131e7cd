"""A stand-in for Home Assistant's frontend, for beaconwatch's Home Assistant stage.

Home Assistant starts in recovery mode when `frontend` does not set up (CRITICAL_INTEGRATIONS in
homeassistant/bootstrap.py), and the real one needs the home-assistant-frontend package (tens of
megabytes of JavaScript) that a test without a browser has no use for. This one sets up and does
nothing else.
"""

DOMAIN = "frontend"


async def async_setup(hass, config):
    """Set up nothing: the stage reads the registries and the recorder, not pages."""
    return True
