import Foundation
@testable import GPUEncodeCore
import XCTest

/// Writes that stay in the folder they were checked in: a folder swapped for a symbolic link
/// between the check and the write neither takes the file elsewhere nor splits the temporary from
/// its output. Deterministic counterparts of Tests/Hostile/containment_race.py: the swap is made at
/// the worst moment by the test itself, and the file system is the oracle.
final class ContainedDirectoryTests: GPUEncodeTestCase {
    private func folder(_ name: String) throws -> URL {
        let dir = scratch(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Moves `dir` aside (to `dir.real`) and puts a link to `outside` at its name.
    private func swapForLink(_ dir: URL, to outside: URL) throws -> URL {
        let moved = URL(fileURLWithPath: dir.path + ".real")
        XCTAssertEqual(rename(dir.path, moved.path), 0)
        XCTAssertEqual(symlink(outside.path, dir.path), 0)
        return moved
    }

    /// The temporary was made in the folder; the folder is then swapped for a link to another one.
    /// The rename happens in the folder the temporary is in, as if nothing had moved; by path it
    /// would look for the temporary through the link (and fail, or with a temporary planted there,
    /// put that in place).
    func testACommitHappensInTheFolderTheTemporaryIsIn() throws {
        for overwrite in [false, true] {
            let out = try folder("out-\(overwrite)")
            let outside = try folder("outside-\(overwrite)")
            let target = out.appendingPathComponent("report.json").path
            let temp = try TemporaryFile(in: out.path, for: target)
            XCTAssertEqual(write(temp.fd, "ours", 4), 4)
            XCTAssertTrue(temp.close())
            let moved = try swapForLink(out, to: outside)
            try temp.commit(to: target, overwrite: overwrite)
            XCTAssertEqual(listing(outside), [], "nothing lands where the link points")
            XCTAssertEqual(listing(moved), ["report.json"], "the file is in the folder checked, and no temporary is left")
            XCTAssertEqual(try String(contentsOfFile: moved.appendingPathComponent("report.json").path, encoding: .utf8), "ours")
        }
    }

    /// Below the root, every folder is opened without following links: a link is refused (73,
    /// naming it), even one that leads back inside; missing folders are made where asked; `..` is
    /// never walked.
    func testFoldersBelowTheRootAreWalkedWithoutFollowingLinks() throws {
        let root = try folder("root")
        let outside = try folder("outside")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        XCTAssertEqual(symlink(outside.path, root.appendingPathComponent("link").path), 0)
        XCTAssertEqual(symlink(root.appendingPathComponent("a").path, root.appendingPathComponent("inner").path), 0)
        try Data("x".utf8).write(to: root.appendingPathComponent("file.txt"))
        let top = try ContainedDirectory(root: root.path)

        let b = try top.descend("a/./b", creating: false)
        XCTAssertEqual(b.path, root.path + "/a/b")
        func refused(_ relative: String, creating: Bool, mentioning text: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try top.descend(relative, creating: creating), file: file, line: line) { error in
                let e = error as? GPUEncodeError
                XCTAssertEqual(e?.exitCode, ExitCode.cannotCreate, "\(error)", file: file, line: line)
                XCTAssertTrue(e?.description.contains(text) == true, "\(error)", file: file, line: line)
                XCTAssertFalse(e?.description.contains("\n") ?? true, file: file, line: line)
            }
        }
        refused("link", creating: false, mentioning: "link: is a symbolic link")
        refused("link/new", creating: true, mentioning: "is a symbolic link")
        refused("inner/b", creating: false, mentioning: "inner: is a symbolic link")
        refused("a/../link", creating: false, mentioning: "\"..\"")
        refused("file.txt", creating: false, mentioning: "is not a folder")
        refused("missing", creating: false, mentioning: "no such folder")
        XCTAssertEqual(listing(outside), [], "nothing was made through the link")

        let made = try top.descend("a/new/deeper", creating: true)
        var st = stat()
        XCTAssertEqual(lstat(root.appendingPathComponent("a/new/deeper").path, &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFDIR)
        try writeFileAtomically(Array("hello".utf8), in: made, to: made.path + "/x.txt", overwrite: false)
        XCTAssertEqual(try String(contentsOfFile: root.appendingPathComponent("a/new/deeper/x.txt").path, encoding: .utf8), "hello")
    }

    /// A folder walked to and held: swapped for a link after the walk, the write still lands in it.
    func testAWriteLandsInTheFolderWalkedTo() throws {
        let root = try folder("root")
        let outside = try folder("outside")
        let sub = root.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        let held = try ContainedDirectory(root: root.path).descend("sub", creating: false)
        let moved = try swapForLink(sub, to: outside)
        try writeFileAtomically(Array("{}".utf8), in: held, to: sub.path + "/look.json", overwrite: true)
        XCTAssertEqual(listing(outside), [])
        XCTAssertEqual(listing(moved), ["look.json"])
        // Walked again now, the link is refused.
        XCTAssertThrowsError(try ContainedDirectory(root: root.path).descend("sub", creating: false))
    }
}
