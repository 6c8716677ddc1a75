import Glibc
import SubscriptionWire
import XCTest

@testable import SubscriptionState

/// A fresh directory under /tmp, removed with everything in it by ``remove()``.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/subd-state-test.XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { preconditionFailure("mkdtemp: \(String(cString: strerror(errno)))") }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }

    /// Removes the directory and what is in it (files and directories one level down).
    func remove() { removeTree(path) }
}

private func removeTree(_ path: String) {
    if let directory = opendir(path) {
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            if unlink(child) != 0 { removeTree(child) }
        }
        closedir(directory)
    }
    rmdir(path)
}

/// The bytes of the file at `path`.
func readFile(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY)
    precondition(fd >= 0, "open \(path): \(String(cString: strerror(errno)))")
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        precondition(got >= 0, "read \(path)")
        if got == 0 { return bytes }
        bytes += chunk[0..<got]
    }
}

/// Makes the file at `path` hold exactly `bytes`.
func writeFile(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    precondition(fd >= 0, "open \(path): \(String(cString: strerror(errno)))")
    defer { close(fd) }
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    precondition(written == bytes.count, "write \(path)")
}

/// The size of the file at `path`, or nil when there is none.
func fileSize(_ path: String) -> Int? {
    var info = stat()
    return stat(path, &info) == 0 ? Int(info.st_size) : nil
}

/// A ``StateDisk`` that counts the calls, skips the real syncs (the tests need no durability, and run faster), and
/// fails on demand: a write that passes ``writeBudget`` writes what fits and then fails with ENOSPC; a sync fails
/// with ``syncError`` when it is set. With ``writePiece`` set, each write takes only part of what it is given, as
/// the kernel may.
final class CountingDisk: StateDisk {
    var writes = 0
    var bytesWritten = 0
    var fileSyncs = 0
    var directorySyncs = 0
    /// Bytes that may still be written; nil: no limit.
    var writeBudget: Int?
    /// The errno every sync fails with; nil: syncs succeed.
    var syncError: Int32?
    /// How many syncs fail with ``syncError`` before they work again (as Linux reports a writeback error once); nil:
    /// every one.
    var failingSyncs: Int?
    /// The errno every ftruncate fails with; nil: they are made.
    var truncateError: Int32?
    /// How many ftruncate calls were asked for.
    var truncates = 0
    /// Make the real fdatasync and fsync calls too.
    var realSyncs = false
    /// How many of the bytes a write is given it takes (at least 1); nil: all of them.
    var writePiece: ((_ offered: Int) -> Int)?

    var syncs: Int { fileSyncs + directorySyncs }

    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        writes += 1
        var count = bytes.count
        if let writePiece, count > 0 { count = max(1, min(count, writePiece(count))) }
        if let budget = writeBudget {
            if budget == 0 { return -Int(ENOSPC) }
            count = min(count, budget)
            writeBudget = budget - count
        }
        let written = SystemDisk().write(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        if written > 0 { bytesWritten += written }
        return written
    }

    func syncFile(_ fd: Int32) -> Int32 {
        fileSyncs += 1
        if let syncError {
            if let left = failingSyncs {
                failingSyncs = left - 1
                if left == 1 { self.syncError = nil }
            }
            return syncError
        }
        return realSyncs ? SystemDisk().syncFile(fd) : 0
    }

    func syncDirectory(_ fd: Int32) -> Int32 {
        directorySyncs += 1
        if let syncError { return syncError }
        return realSyncs ? SystemDisk().syncDirectory(fd) : 0
    }

    func truncateFile(_ fd: Int32, to length: Int) -> Int32 {
        truncates += 1
        if let truncateError { return truncateError }
        return SystemDisk().truncateFile(fd, to: length)
    }

    /// Forgets the counts so far.
    func reset() {
        writes = 0
        bytesWritten = 0
        fileSyncs = 0
        directorySyncs = 0
    }
}

/// A value of `number` at `revision` whose bytes say so.
func sampleValue(_ number: String, _ revision: UInt64, sender: String? = nil, info: [InfoPair] = []) -> StoredValue {
    StoredValue(
        number: number, revision: revision, sender: sender, info: info,
        payload: Array("\(number) at \(revision)".utf8))
}

/// Opens `directory` with a counting disk, failing the test on an error.
func openStore(
    _ directory: String, policy: FsyncPolicy = .default, compaction: CompactionPolicy = .default,
    disk: CountingDisk = CountingDisk(), file: StaticString = #filePath, line: UInt = #line
) throws -> (StateStore, RecoveredState, RecoveryReport) {
    try StateStore.open(directory: directory, policy: policy, compaction: compaction, disk: disk)
}

/// The error `body` throws, as a ``StateError``; fails the test when it throws none or another kind.
func stateError<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> StateError? {
    do {
        _ = try body()
        XCTFail("no error thrown", file: file, line: line)
    } catch let error as StateError {
        return error
    } catch {
        XCTFail("not a StateError: \(error)", file: file, line: line)
    }
    return nil
}

/// A test case with a fresh temporary directory and a fresh counting disk for each test, the directory removed after.
class StateDirectoryTestCase: XCTestCase {
    /// This test's directory.
    var directory: TemporaryDirectory!
    /// This test's disk (counts syncs, fails when told to).
    var disk: CountingDisk!

    override func setUp() {
        super.setUp()
        directory = TemporaryDirectory()
        disk = CountingDisk()
    }

    override func tearDown() {
        directory.remove()
        super.tearDown()
    }
}
