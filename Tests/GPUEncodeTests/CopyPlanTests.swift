@testable import GPUEncodeRender
import XCTest

/// `CopyPlan`: the row copies of several transfers (a readback and the next frame's upload) run as
/// one parallel pass; every worker count must copy exactly what one copy at a time would.
final class CopyPlanTests: XCTestCase {
    func testEveryWorkerCountCopiesEveryRowOfEveryJob() {
        // Planes of unequal rows and strides, as a frame's Y and chroma (kept small), and a closure
        // job; destination rows are padded, and the padding must stay untouched.
        let shapes = [(rows: 67, rowBytes: 96, sourceStride: 112, destinationStride: 100),
                      (rows: 34, rowBytes: 48, sourceStride: 64, destinationStride: 48),
                      (rows: 34, rowBytes: 48, sourceStride: 64, destinationStride: 52),
                      (rows: 1, rowBytes: 7, sourceStride: 7, destinationStride: 9)]
        let sources = shapes.enumerated().map { i, s in
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: s.rows * s.sourceStride)
            for k in 0..<(s.rows * s.sourceStride) { p[k] = UInt8(truncatingIfNeeded: k * 7 + i * 31) }
            return p
        }
        let destinations = shapes.map { UnsafeMutablePointer<UInt8>.allocate(capacity: $0.rows * $0.destinationStride) }
        let closureRows = UnsafeMutablePointer<Int>.allocate(capacity: 5)
        defer {
            (sources + destinations).forEach { $0.deallocate() }
            closureRows.deallocate()
        }
        for workers in [1, 2, 3, 8, 16] {
            for (i, s) in shapes.enumerated() { destinations[i].update(repeating: 0xEE, count: s.rows * s.destinationStride) }
            closureRows.update(repeating: 0, count: 5)
            var plan = CopyPlan()
            for (i, s) in shapes.enumerated() {
                plan.add(rows: s.rows, rowBytes: s.rowBytes, from: sources[i], stride: s.sourceStride, to: destinations[i], stride: s.destinationStride)
            }
            plan.add(rows: 5) { y in closureRows[y] += 1 }
            plan.add(rows: 0) { _ in XCTFail("a job of no rows runs nothing") }
            plan.run(workers: workers)
            for (i, s) in shapes.enumerated() {
                for y in 0..<s.rows {
                    let copied = destinations[i] + y * s.destinationStride
                    XCTAssertEqual(Array(UnsafeBufferPointer(start: copied, count: s.rowBytes)),
                                   Array(UnsafeBufferPointer(start: sources[i] + y * s.sourceStride, count: s.rowBytes)),
                                   "job \(i) row \(y), \(workers) workers")
                    XCTAssertTrue(UnsafeBufferPointer(start: copied + s.rowBytes, count: s.destinationStride - s.rowBytes).allSatisfy { $0 == 0xEE },
                                  "job \(i) row \(y) padding, \(workers) workers")
                }
            }
            XCTAssertEqual(Array(UnsafeBufferPointer(start: closureRows, count: 5)), [1, 1, 1, 1, 1], "\(workers) workers")
        }
    }
}
