/// The batch's share done and time left, weighted by the jobs' media durations. Counting jobs
/// (each job 1/N, as before) made a batch of short clips and one long one look nearly done when
/// only the short ones were: 0:02 left with 16 s to go. Here every job weighs its seconds of media,
/// as the pipeline reports them; a job whose length is not known yet (not started, or a file that
/// does not say) weighs the mean of the known ones. The time left is the media left over the media
/// encoded per wall second so far (all workers together).
package struct BatchETA: Equatable {
    package let fraction: Double
    /// Seconds left; nil until some media is done.
    package let eta: Double?
    /// Seconds of media in the whole batch (unknown lengths estimated) and done so far.
    package let totalMedia: Double
    package let doneMedia: Double

    /// `finished`: media seconds of each finished job (a failed one: what it reached); `running`:
    /// each running job's position and length; `notStarted`: jobs still to run (skipped jobs are
    /// neither); `elapsed`: wall seconds since the batch started.
    package static func estimate(finished: [Double], running: [(position: Double, total: Double?)], notStarted: Int,
                                 elapsed: Double) -> BatchETA {
        // A job that failed before any frame (0 s) says nothing about how long jobs are.
        let known = finished.filter { $0 > 0 } + running.compactMap { $0.total.flatMap { $0 > 0 ? $0 : nil } }
        let mean = known.isEmpty ? 0 : known.reduce(0, +) / Double(known.count)
        var total = finished.reduce(0, +)
        var done = total
        for r in running {
            let length = r.total.flatMap { $0 > 0 ? $0 : nil } ?? max(mean, r.position)
            total += max(length, r.position)
            done += min(r.position, max(length, r.position))
        }
        total += Double(max(0, notStarted)) * mean
        guard total > 0 else {
            return BatchETA(fraction: notStarted == 0 && running.isEmpty ? 1 : 0, eta: nil, totalMedia: 0, doneMedia: 0)
        }
        let fraction = min(1, max(0, done / total))
        var eta: Double?
        if done > 0 && elapsed > 0 && (!known.isEmpty || notStarted == 0) {
            eta = (total - done) / (done / elapsed)
        }
        return BatchETA(fraction: fraction, eta: eta, totalMedia: total, doneMedia: done)
    }
}
