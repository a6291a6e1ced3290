import ArgumentParser
import GPUEncodeBatch
import GPUEncodeKit
import Glibc

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Work with batch reports.",
        discussion: """
        gpuencode report merge SHARD.json... -o ALL.json [--junit ALL.xml]
          Joins the --report files of a sharded batch (one per CI machine) into one report, the
          jobs in plan order and the totals recomputed. Fails when the reports come from different
          plans (64), or when a job is in two reports or missing from all of them (81, naming the
          job or the shard whose report is missing).
        """,
        subcommands: [Merge.self]
    )

    struct Merge: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Join shard reports into one; fail when a job is missing or duplicated."
        )

        @Argument(help: "The shard reports (gpuencode batch --report).")
        var reports: [String] = []

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The merged report.", valueName: "file"))
        var output: String

        @Option(help: ArgumentHelp("Also write the merged jobs as JUnit XML.", valueName: "file"))
        var junit: String?

        func validate() throws {
            if reports.isEmpty { throw ValidationError("give the shard reports to merge") }
        }

        func run() throws {
            do {
                let loaded = try reports.map(BatchReport.load)
                let merged = try BatchReport.merge(loaded)
                try BatchReport.write(JSONWriter.write(merged), to: output)
                if let junit { try BatchReport.write(BatchReport.junit(jobs: merged["jobs"]?.arrayValueForCLI ?? []), to: junit) }
            } catch let error as GPUEncodeError {
                fputs("gpuencode: error: \(error.description)\n", stderr)
                throw ExitCode(error.exitCode)
            }
        }
    }
}

extension JSONValue {
    var arrayValueForCLI: [JSONValue]? { if case .array(let a) = kind { return a }; return nil }
}
