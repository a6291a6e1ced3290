import GPUEncodeCore

/// `--width`, `--height`, `--size`, `--max-width`, `--max-height`: the output picture's size, as
/// the user asked for it. Sizes are of the displayed picture: upright (rotation applied) and with
/// the sample aspect ratio applied, so a 1920x1080 phone clip flagged 90° is 1080 wide, and a
/// 720x576 clip with 16:15 pixels is 768 wide. The answer is always even (4:2:0) and keeps the
/// displayed aspect; a scaled picture has square pixels.
public struct ScaleRequest: Sendable, Equatable {
    /// `--width`, `--height` (or both from `--size`): a box the picture is fitted into keeping its
    /// aspect; one of them alone gives the other from the aspect.
    public var width: Int?
    public var height: Int?
    /// `--max-width`, `--max-height`: the picture is made smaller (never larger) to fit.
    public var maxWidth: Int?
    public var maxHeight: Int?

    public init(width: Int? = nil, height: Int? = nil, maxWidth: Int? = nil, maxHeight: Int? = nil) {
        self.width = width
        self.height = height
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
    }

    public var isEmpty: Bool { self == ScaleRequest() }

    /// The largest side gpuencode encodes (libx264's and llvmpipe's limit).
    public static let maxSide = 16384

    /// The output size for a picture of `width` x `height` pixels of aspect `sampleAspect`
    /// (width over height of one pixel; 1 for square pixels), or nil when it stays as it is.
    /// The displayed size is width * sampleAspect x height; a size asked for is fitted inside the
    /// box keeping that aspect, then shrunk to the maxima, each side rounded to the nearest even
    /// number (at least 2).
    public func target(width w: Int, height h: Int, sampleAspect: Double = 1) -> (width: Int, height: Int)? {
        guard !isEmpty, w > 0, h > 0 else { return nil }
        let displayW = Double(w) * (sampleAspect > 0 && sampleAspect.isFinite ? sampleAspect : 1), displayH = Double(h)
        let aspect = displayW / displayH
        // The exact (unrounded) size, then rounded once at the end.
        var (tw, th) = (displayW, displayH)
        switch (width, height) {
        case let (bw?, bh?):
            // Fit inside the box: the side that binds is given, the other follows the aspect.
            if Double(bw) / Double(bh) <= aspect { (tw, th) = (Double(bw), Double(bw) / aspect) } else { (tw, th) = (Double(bh) * aspect, Double(bh)) }
        case let (bw?, nil): (tw, th) = (Double(bw), Double(bw) / aspect)
        case let (nil, bh?): (tw, th) = (Double(bh) * aspect, Double(bh))
        case (nil, nil): break
        }
        var shrink = 1.0
        if let m = maxWidth, tw > Double(m) { shrink = min(shrink, Double(m) / tw) }
        if let m = maxHeight, th > Double(m) { shrink = min(shrink, Double(m) / th) }
        if shrink < 1 {
            // The bound that binds is met exactly; the other side follows the aspect.
            let byWidth = maxWidth.map { Double($0) / tw == shrink } ?? false
            if byWidth { (tw, th) = (Double(maxWidth!), Double(maxWidth!) / aspect) } else { (tw, th) = (Double(maxHeight!) * aspect, Double(maxHeight!)) }
        }
        // Not clamped to maxSide: a side past it is refused by the caller rather than the aspect bent.
        func even(_ v: Double) -> Int { max(2, 2 * Int(min(v / 2, 1e6).rounded())) }
        let out = (width: even(tw), height: even(th))
        // Unchanged: the displayed size is what the picture already has (square pixels kept).
        if out.width == (w & ~1) && out.height == (h & ~1) && abs(displayW - Double(w)) < 0.5 { return nil }
        // max-* alone on a picture that fits, with non-square pixels: nothing to do either.
        if width == nil && height == nil && shrink >= 1 { return nil }
        return out
    }

    /// "1280x720" → (1280, 720); nil when not two whole numbers joined by x.
    public static func parseSize(_ text: String) -> (Int, Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = side(String(parts[0])), let h = side(String(parts[1])) else { return nil }
        return (w, h)
    }

    /// A side as given: digits only.
    static func side(_ text: String) -> Int? {
        guard !text.isEmpty, text.count <= 6, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// What is wrong with `value` as a side (`what` names it), or nil.
    static func sideProblem(_ value: Int, _ what: String) -> String? {
        if value < 2 || value > maxSide { return "\(value) is out of range 2...\(maxSide)" }
        if value % 2 != 0 { return "\(value) is odd; 4:2:0 video needs an even \(what) (try \(value + 1) or \(value - 1))" }
        return nil
    }

    /// Parses one side as the rules for `--width` and its kin check it.
    static func parseSide(_ text: String, _ what: String) -> (Int?, String?) {
        guard let v = side(text) else { return (nil, "\(text) is not a whole number of pixels") }
        if let problem = sideProblem(v, what) { return (nil, problem) }
        return (v, nil)
    }

    /// `self` where given, else `base`. Width, height and size are one request (the layer that
    /// gives any of them gives all: a manifest's --width replaces a preset's width and height);
    /// the maxima stack one by one.
    func over(_ base: ScaleRequest) -> ScaleRequest {
        var s = width != nil || height != nil ? self : ScaleRequest(width: base.width, height: base.height)
        s.maxWidth = maxWidth ?? base.maxWidth
        s.maxHeight = maxHeight ?? base.maxHeight
        return s
    }

    /// For `-v` and the batch digest: "1280x-", "max 1920x1080", ...
    public var description: String {
        var parts: [String] = []
        if width != nil || height != nil { parts.append("\(width.map(String.init) ?? "-")x\(height.map(String.init) ?? "-")") }
        if maxWidth != nil || maxHeight != nil { parts.append("max \(maxWidth.map(String.init) ?? "-")x\(maxHeight.map(String.init) ?? "-")") }
        return parts.joined(separator: " ")
    }
}
