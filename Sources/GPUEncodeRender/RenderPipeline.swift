import GPUEncodeCore

/// Video frames through a `FrameRenderer`, in order: a frame goes in with the buffer its result is
/// written to and comes out finished, with its measurements. Whether the readback waits is the
/// renderer's business: with client memory (llvmpipe) a frame finishes in the call that submits it;
/// with pixel buffer objects (hardware GPUs) its readback runs while the next frame is uploaded and
/// drawn, so it finishes one call later, and `flush` hands out the last one.
public final class RenderPipeline<Buffer: PlaneBuffer> {
    public struct Finished {
        /// The buffer given with the frame, now holding the filtered picture.
        public let buffer: Buffer
        /// The frame's number in the run, from 0.
        public let index: Int
        /// The time the filters saw, in seconds.
        public let time: Double
        /// The frame's measurements (`averageColor` filters), in chain order.
        public let statistics: [(name: String, value: [Double])]
    }

    public let renderer: FrameRenderer
    /// Readback overlaps the next frame (pixel buffer objects, unless told to wait).
    private let overlapped: Bool
    /// Submitted frames whose pixels are not read back yet, oldest first (at most `renderer.readSets`).
    private var inFlight: [Finished] = []

    /// `overlapReadback` false makes every frame finish in its own call even with pixel buffer
    /// objects (the one-frame-at-a-time reference run, and measurements of the difference).
    public init(renderer: FrameRenderer, overlapReadback: Bool = true) {
        self.renderer = renderer
        overlapped = overlapReadback && renderer.canPipeline
    }

    /// Renders `source` at `time` seconds into `buffer`; returns the frames this call finished,
    /// oldest first (none, this one, or the one before it). `source` nil: the renderer's source
    /// planes were rendered on the GPU (a `Deinterlacer`).
    public func process(source: [Plane]?, time: Double, into buffer: Buffer) throws -> [Finished] {
        guard overlapped else {
            try renderer.render(source: source, output: buffer.planes, time: time)
            return [finished(buffer, time: time)]
        }
        // With the queue full and its oldest frame finished on the GPU, that frame is collected by
        // the same call that submits this one: one parallel copy takes its pixels out and this
        // frame's planes in. While the GPU is still on it, this frame goes to the GPU first (so the
        // GPU has it queued while the CPU waits) and the oldest is collected after. (H100, 16 copy
        // threads: 1080p sepia 4507 fps against 4280 with the two copies apart; combining even when
        // the GPU is behind lost 6-7% where the GPU is the bound, heavyblur and 2160p.)
        let combine = renderer.pendingFrames + 1 >= renderer.readSets && renderer.oldestIsDone
        let oldest = combine ? inFlight.removeFirst() : nil
        try renderer.submit(source: source, time: time, collectingOldestInto: oldest?.buffer.planes)
        // The measurements are read back while the frame is drawn (only its pixels wait for
        // `collect`), so they are taken now and travel with the frame.
        inFlight.append(finished(buffer, time: time))
        var done = oldest.map { [$0] } ?? []
        // Not collected above: collected now, after this frame went to the GPU.
        if renderer.pendingFrames >= renderer.readSets { done.append(try collectOldest()) }
        return done
    }

    /// The frames still in flight, finished, oldest first: after the last frame.
    public func flush() throws -> [Finished] {
        var done: [Finished] = []
        while !inFlight.isEmpty { done.append(try collectOldest()) }
        return done
    }

    /// The frame the renderer drew last, with its measurements.
    private func finished(_ buffer: Buffer, time: Double) -> Finished {
        Finished(buffer: buffer, index: renderer.frameIndex - 1, time: time, statistics: renderer.statistics)
    }

    private func collectOldest() throws -> Finished {
        let oldest = inFlight.removeFirst()
        try renderer.collect(into: oldest.buffer.planes)
        return oldest
    }
}
