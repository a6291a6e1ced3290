import CFFmpeg

/// Copied (not re-encoded) packets go to the muxer as they are, so a damaged or spliced input whose
/// timestamps jump back (a file concatenated with itself, a broken edit) would make the muxer refuse
/// the whole output. Like the video path, which drops frames at or before a time already shown, a
/// copied packet whose DTS does not move forward is dropped: the rest of the stream stays bit-identical
/// and in sync, instead of having its timestamps rewritten as the ffmpeg CLI does.
package struct CopiedPacketOrder {
    /// The muxer accepts equal DTS in a row only when its format says AVFMT_TS_NONSTRICT.
    private let allowEqual: Bool
    private var last: [Int32: Int64] = [:]
    package private(set) var dropped = 0

    package init(format: UnsafePointer<AVOutputFormat>) {
        allowEqual = format.pointee.flags & AVFMT_TS_NONSTRICT != 0
    }

    /// True when `packet` (already in the output stream's time base and index) may be written.
    package mutating func admit(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        let dts = packet.pointee.dts
        guard dts != AV_NOPTS else { return true }
        let stream = packet.pointee.stream_index
        if let previous = last[stream], dts < previous || (dts == previous && !allowEqual) {
            dropped += 1
            return false
        }
        last[stream] = dts
        return true
    }
}
