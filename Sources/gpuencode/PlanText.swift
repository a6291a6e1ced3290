import GPUEncodeKit

/// `--dry-run`'s plan for people: a few lines made from the same document `--json` prints, so the
/// two never disagree. (Warnings are not repeated: they were printed as they were found.)
enum PlanText {
    static func lines(_ doc: JSONValue) -> [String] {
        var lines: [String] = []
        if let input = doc["input"] {
            let duration = input["duration"].flatMap(number).map { ", \(format1($0)) s" } ?? ""
            lines.append("input \(text(input["path"])) (\(text(input["container"]))\(duration))")
            for s in array(input["streams"]) { lines.append("  #\(text(s["index"])) \(streamSummary(s))") }
        }
        if let output = doc["output"] {
            lines.append("output \(text(output["path"])) (\(text(output["container"])))")
            for s in array(output["streams"]) {
                let action = text(s["action"])
                var line = "  #\(text(s["input"])) \(text(s["type"])) \(text(s["codec"]))"
                switch action {
                case "encode":
                    line = "  #\(text(s["input"])) → #\(text(s["index"])) \(text(s["type"])): encode \(text(s["codec"])) (\(text(s["encoder"])))"
                    if s["type"].flatMap(string) == "video" {
                        line += " \(text(s["width"]))x\(text(s["height"])) \(text(s["pixelFormat"]))"
                        line += s["gpu"].flatMap(bool) == true ? ", filtered on the GPU" : ", no GPU stage"
                    }
                case "copy":
                    line = "  #\(text(s["input"])) → #\(text(s["index"])) \(text(s["type"])): copy \(text(s["codec"]))"
                default:
                    line += ": dropped (\(text(s["reason"])))"
                }
                lines.append(line)
            }
        }
        if let settings = doc["settings"], case .object(let members) = settings.kind {
            let given = members.filter { if case .null = $0.value.kind { return false } else { return true } }
            lines.append("settings " + given.map { "\($0.key)=\(scalar($0.value))" }.joined(separator: " "))
        }
        if let preset = doc["preset"], preset["name"] != nil {
            lines.append("preset \(text(preset["name"])) (\(text(preset["origin"]))): \(array(doc["filters"]).count) filter(s)")
        }
        if let gpu = doc["gpu"], gpu["renderer"] != nil {
            lines.append("GPU \(text(gpu["renderer"])), render path \(text(gpu["renderPath"])), transfer \(text(gpu["transfer"])), \(array(gpu["passes"]).count) pass line(s) compiled")
        } else {
            lines.append("GPU none (no filters to run)")
        }
        lines.append("dry run: nothing written")
        return lines
    }

    private static func streamSummary(_ s: JSONValue) -> String {
        var parts = [text(s["type"]), text(s["codec"])]
        switch s["type"].flatMap(string) {
        case "video":
            parts.append("\(text(s["width"]))x\(text(s["height"]))")
            if let rate = s["frameRate"].flatMap(number) { parts.append("\(format1(rate)) fps") }
            if let r = s["rotation"].flatMap(number), r != 0 { parts.append("rotation \(Int(r))°") }
        case "audio":
            parts.append("\(text(s["sampleRate"])) Hz \(text(s["channelLayout"]))")
        default:
            break
        }
        if let language = s["language"].flatMap(string) { parts.append("(\(language))") }
        return parts.joined(separator: " ")
    }

    private static func array(_ v: JSONValue?) -> [JSONValue] {
        if let v, case .array(let items) = v.kind { return items }
        return []
    }

    private static func string(_ v: JSONValue) -> String? {
        if case .string(let s) = v.kind { return s }
        return nil
    }

    private static func number(_ v: JSONValue) -> Double? {
        if case .number(let n) = v.kind { return n }
        return nil
    }

    private static func bool(_ v: JSONValue) -> Bool? {
        if case .bool(let b) = v.kind { return b }
        return nil
    }

    private static func text(_ v: JSONValue?) -> String { v.map(scalar) ?? "?" }

    private static func scalar(_ v: JSONValue) -> String {
        switch v.kind {
        case .string(let s): return s
        case .number(let n): return JSONWriter.number(n)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "-"
        default: return JSONWriter.write(v).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
    }
}
