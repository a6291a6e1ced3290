/// libx265 3.5 (Debian 12's) writes past the end of its lookahead's buffers when the picture is
/// narrow: the lookahead works on a half-size picture in 8x8 blocks, and with 3 blocks or fewer
/// a row (pictures up to 49 pixels wide) the SIMD code of its CU-tree pass (`Lookahead::cuTree`,
/// on by default at every preset) writes 16 bytes past `m_scratch`, a row of that many ints, and
/// reads past the per-block cost arrays. glibc then aborts ("corrupted size vs. prev_size"),
/// or not, from run to run, depending on what lies after the buffer; a 36x64 Main 10 encode
/// (a portrait phone clip at `--height 64`) aborted most runs. The ffmpeg CLI does the same
/// (`-s 36x64 -c:v libx265` under valgrind, or under glibc's malloc check), at 8 and 10 bits
/// and at any height; x265 refuses pictures narrower than 16. From 4 blocks (50 pixels) on
/// valgrind finds nothing, and with `cutree=0` nothing at any width.
///
/// why not the user's say: a `cutree=1` in `--x265-params` would bring the overflow back, so
/// this goes after the user's parameters (the later wins).
package enum X265NarrowPicture {
    /// The widest picture whose lookahead row is 3 blocks: (49 / 2 + 7) / 8 = 3.
    package static let widestAffected = 49

    /// The x265 parameters that keep an encode of `width`-pixel-wide pictures inside its buffers.
    package static func params(width: Int) -> [String] {
        lookaheadBlocks(width: width) <= 3 ? ["cutree=0"] : []
    }

    /// x265's `m_8x8Width`: the half-size picture's width in 8x8 blocks.
    static func lookaheadBlocks(width: Int) -> Int {
        (width / 2 + 7) / 8
    }
}
