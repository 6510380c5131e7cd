"""The rules document both chaos runs (chaos.py, cluster.py) give their daemons: one Ubudu region,
the Kitchen zone, with a notification on every entry, counted per device: the checks follow the
counts across restarts and takeovers (docs/behaviour.md §9, docs/reliability.md)."""


def kitchen_rules(group, uuid, major):
    """The Kitchen as zone `major` of `uuid`, in rule group `group`."""
    return {
        "u_beacons": [{
            "id": "kitchen", "group_id": group, "name": "Kitchen", "start": None, "end": None, "schedule": None,
            "proximity_uid": uuid, "major": major, "minor": "",
            "rules_actions": [{
                "id": "in",
                "rule": {"trigger": "on_entry", "min_events": 1, "max_events": None, "min_group_events": 0,
                         "max_group_events": None, "latch_time": 0, "maximum_proximity": None},
                "action": {"notify_user": "In the kitchen", "notify_server": None, "open_url": None,
                           "open_pbk": None},
            }],
        }]
    }  # fmt: skip
