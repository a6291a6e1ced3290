import Foundation
@testable import GPUEncodeKit
import XCTest

/// Issue 15's memory target (docs/PERFORMANCE.md, Memory). Peak RSS itself is measured by
/// bench/memory.sh, not here (it depends on the machine and on x264); this guards the queue depth.
final class MemoryTests: XCTestCase {
    /// Each queue slot is a decoded or filtered frame (3 MiB at 1080p) that the decoder's pool or
    /// the output pool must hold on top of what the stages need: one slot measured as fast as three.
    func testPipelineQueuesHoldOneFrame() {
        XCTAssertEqual(PipelinedVideoStages.queueCapacity, 1,
                       "deeper queues cost 3 MiB of peak RSS per slot and frame size at 1080p (issue 15); measure with bench/memory.sh before changing")
    }
}
