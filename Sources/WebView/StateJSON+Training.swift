import BeaconCore

extension StateJSON {
    /// `/api/v1/fingerprints` (docs/behaviour.md §22, docs/web.md): per trained room its samples,
    /// scanners, who trained it and when, the cross-validated accuracy (`null` while too few
    /// samples) and the rooms it is confused with; and the sessions running.
    package static func fingerprints(_ model: BuildingModel) -> String {
        let training = model.training
        var json = JSONText()
        json.object { json in
            json.field("t", time: training.now)
            json.key("rooms")
            json.array { json in
                for room in training.ordered(model.hierarchy) {
                    json.object { json in
                        json.field("region", room.room)
                        json.field("name", model.roomName(room.room))
                        json.field("samples", room.samples)
                        json.field("scanners", room.scanners)
                        json.field("device", room.device)
                        json.field("trainedAt", time: Timestamp(microseconds: room.trainedAt))
                        json.field("accuracy", room.tooFew ? nil : room.accuracy)
                        json.field("tooFew", room.tooFew)
                        json.key("confusedWith")
                        json.array { json in
                            for other in room.confusedWith {
                                json.object { json in
                                    json.field("room", other.room)
                                    json.field("name", model.roomName(other.room))
                                    json.field("share", other.share)
                                }
                            }
                        }
                    }
                }
            }
            json.key("sessions")
            json.array { json in
                for session in training.sessions {
                    json.object { json in
                        json.field("device", session.device)
                        json.field("room", session.room.description)
                        json.field("name", model.name(of: session.room))
                        json.field("started", time: session.started)
                        json.field("until", time: session.until)
                        json.field("seconds", session.seconds)
                        json.field("secondsLeft", training.now.map { session.left(at: $0) })
                        json.field("samples", session.samples)
                    }
                }
            }
        }
        return json.text
    }
}
