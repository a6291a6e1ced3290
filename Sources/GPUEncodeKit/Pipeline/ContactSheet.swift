// Contact sheets: one frame through many presets, in a labelled grid, like a photo app's filter
// picker. Each tile is rendered at the frame's full size (so blurs and grain look as they will in
// the video), shrunk on the GPU by `resize` (fill: a preset that changes the shape is cropped to
// the tile) and labelled by `label` in the same chain; the CPU only lays the tiles out.

public enum ContactSheet {
    public struct Layout: Sendable, Equatable {
        public var columns: Int
        public var rows: Int
        public var tileWidth: Int
        public var tileHeight: Int
        /// Pixels between tiles and around the grid.
        public var gap: Int
        public var width: Int { columns * tileWidth + (columns + 1) * gap }
        public var height: Int { rows * tileHeight + (rows + 1) * gap }

        /// `columns` nil: a near-square grid (ceil(sqrt(count)) columns). The tile keeps the
        /// picture's aspect ratio, its height rounded to an even number.
        public init(count: Int, columns: Int?, tileWidth: Int, gap: Int, pictureWidth: Int, pictureHeight: Int) {
            var c = columns ?? 1
            if columns == nil { while c * c < count { c += 1 } }
            self.columns = max(1, min(c, max(count, 1)))
            rows = max(1, (count + self.columns - 1) / self.columns)
            self.tileWidth = tileWidth
            // Even, as video frames are (4:2:0), so a tile fills its cell exactly.
            tileHeight = max(2, 2 * Int((Double(tileWidth) * Double(pictureHeight) / Double(max(pictureWidth, 1)) / 2).rounded()))
            self.gap = gap
        }
    }

    /// The grid's background (between tiles, and empty cells): a dark grey.
    public static let background: (UInt8, UInt8, UInt8) = (24, 24, 24)

    /// The default set: `identity` (the picture as it is) first, then every other built-in preset
    /// but `none` (the same picture as `identity`).
    public static var defaultPresets: [String] {
        let names = Preset.builtinNames
        return names.filter { $0 == "identity" } + names.filter { $0 != "none" && $0 != "identity" }
    }

    /// Renders each preset over the session's picture into a tile and lays them out in order, left
    /// to right and top to bottom, each labelled with its preset's name. `progress` hears each
    /// preset's name as its tile is done.
    public static func render(_ session: Preview.Session, presets: [Preset], columns: Int? = nil, tileWidth: Int = 320, gap: Int = 4,
                              progress: (String) -> Void = { _ in }) throws -> (image: RGBAImage, layout: Layout) {
        guard !presets.isEmpty else { throw GPUEncodeError(.usage, "a contact sheet needs at least one preset") }
        guard (16...4096).contains(tileWidth) else { throw GPUEncodeError(.usage, "--tile-width \(tileWidth) must be between 16 and 4096") }
        if let columns, columns < 1 { throw GPUEncodeError(.usage, "--columns must be at least 1") }
        guard (0...256).contains(gap) else { throw GPUEncodeError(.usage, "--gap \(gap) must be between 0 and 256") }
        let layout = Layout(count: presets.count, columns: columns, tileWidth: tileWidth, gap: gap,
                            pictureWidth: session.width, pictureHeight: session.height)
        guard layout.width <= 16384, layout.height <= 16384 else {
            throw GPUEncodeError(.usage, "the sheet would be \(layout.width)x\(layout.height) pixels; use fewer columns or a smaller --tile-width")
        }
        var pixels = [UInt8](repeating: 255, count: layout.width * layout.height * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = background.0; pixels[i + 1] = background.1; pixels[i + 2] = background.2
        }
        let resize = FilterRegistry.named("resize")!
        let labelScale = max(1, Int((Double(tileWidth) / 160).rounded()))
        for (n, preset) in presets.enumerated() {
            let fit = FilterInstance(resize, values: ["width": .int(layout.tileWidth), "height": .int(layout.tileHeight), "mode": .string("fill")])
            let label = try Comparison.label(preset.name, corner: "topLeft", scale: labelScale)
            let tile = try session.render(preset.filters + [fit, label], light: preset.light)
            let x0 = layout.gap + (n % layout.columns) * (layout.tileWidth + layout.gap)
            let y0 = layout.gap + (n / layout.columns) * (layout.tileHeight + layout.gap)
            // The tile is tileWidth x tileHeight unless a size rounding made it a pixel off.
            for y in 0..<min(tile.height, layout.tileHeight) {
                let from = y * tile.width * 4
                let to = ((y0 + y) * layout.width + x0) * 4
                let count = min(tile.width, layout.tileWidth) * 4
                pixels.replaceSubrange(to..<(to + count), with: tile.pixels[from..<(from + count)])
            }
            progress(preset.name)
        }
        return (RGBAImage(width: layout.width, height: layout.height, pixels: pixels), layout)
    }
}
