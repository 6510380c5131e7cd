import RegionMonitor

extension StateJSON {
    /// `/api/v1/occupancy` (docs/behaviour.md §23, docs/web.md): every announced region's
    /// occupancy as the `occupancy` output gives it (`region`, `kind`, `name`, `occupied`, `count`,
    /// `devices`, `sensors`), with `why` in a person's words; `nil` when the configuration has no
    /// occupancy.
    package static func occupancy(_ model: BuildingModel) -> String? {
        guard let states = model.occupancy else { return nil }
        var json = JSONText()
        json.object { json in
            json.field("t", time: model.latestTime)
            json.key("regions")
            json.array { json in
                for state in states {
                    json.object { json in
                        json.field("region", state.region.description)
                        json.field("kind", state.region.kind.rawValue)
                        json.field("name", state.name)
                        json.field("occupied", state.occupied)
                        json.field("count", state.count)
                        json.key("devices")
                        json.array { json in
                            for device in state.devices { json.string(device) }
                        }
                        json.key("sensors")
                        json.object { json in
                            for (id, shown) in state.sensors.sorted(by: { $0.key < $1.key }) {
                                json.key(id)
                                switch shown {
                                case .detected(let value): json.bool(value)
                                case .count(let people): json.integer(people)
                                case .none, .offline: json.string(nil)
                                }
                            }
                        }
                        json.field("why", model.explanation(state))
                    }
                }
            }
        }
        return json.text
    }
}
