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
        try renderer.submit(source: source, time: time)
        // The measurements are read back while the frame is drawn (only its pixels wait for
        // `collect`), so they are taken now and travel with the frame.
        inFlight.append(finished(buffer, time: time))
        return renderer.pendingFrames >= renderer.readSets ? [try collectOldest()] : []
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
