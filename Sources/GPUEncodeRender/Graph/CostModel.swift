import CEGL
import Glibc

/// What work costs on the renderer at hand, in rough units the passes compare plans with. Both
/// renderers run the same compiler; where the best plan differs, it differs here and nowhere else.
/// A software rasteriser (Mesa's llvmpipe) runs every fragment on the CPU: it pays per fragment
/// shaded and per texel fetched, while a pass or a transfer costs little more than a memcpy it
/// would do anyway. A GPU shades fragments nearly for free and pays per pass (a full round trip
/// through memory, a launch) and per transfer between host and device.
public struct CostModel: Sendable, Equatable, CustomStringConvertible {
    public enum Renderer: String, Sendable {
        case software, hardware
    }

    public var renderer: Renderer
    /// Cost of shading one fragment (fixed part, before its fetches and arithmetic).
    public var perFragment: Double
    /// Cost of one texel fetch in a shader.
    public var perFetch: Double
    /// Cost of one arithmetic instruction in a shader.
    public var perInstruction: Double
    /// Cost of one pass (a draw into its own target), whatever its size.
    public var perPass: Double
    /// Cost of one byte moved between host memory and the renderer's memory.
    public var perTransferByte: Double

    /// Measured on llvmpipe (LLVM 15, 256-bit vectors, 2 cores): a texel fetch about 8
    /// instructions, a fragment's fixed cost about 4; a pass's set-up is negligible next to 1080p.
    public static let software = CostModel(renderer: .software, perFragment: 4, perFetch: 8, perInstruction: 1,
                                           perPass: 2_000, perTransferByte: 0.05)
    /// A discrete GPU: arithmetic and fetches are nearly free next to a pass (the H100 ran 1080p
    /// sepia in 0.22 ms, about the cost of its launch and a round trip through memory) or the bus.
    public static let hardware = CostModel(renderer: .hardware, perFragment: 0.001, perFetch: 0.002, perInstruction: 0.0002,
                                           perPass: 50_000, perTransferByte: 0.5)

    public static func forRenderer(named name: String) -> CostModel {
        ["llvmpipe", "softpipe", "swrast"].contains { name.contains($0) } ? .software : .hardware
    }

    /// The current context's renderer (`GL_RENDERER`).
    static func current() -> CostModel {
        guard let name = glGetString(GLenum(GL_RENDERER)) else { return .hardware }
        return forRenderer(named: String(cString: name))
    }

    /// A program's cost over `fragments` fragments, each with `fetches` texel fetches and
    /// `instructions` arithmetic instructions.
    public func pass(fragments: Int, fetches: Int, instructions: Int) -> Double {
        perPass + Double(fragments) * (perFragment + Double(fetches) * perFetch + Double(instructions) * perInstruction)
    }

    public var isSoftware: Bool { renderer == .software }

    public var description: String { renderer == .software ? "software rasteriser (per fragment and fetch)" : "GPU (per pass and transfer)" }
}
