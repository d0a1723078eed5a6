import Foundation

/// Runs a system tool (`/bin/mount`, `/bin/umount`) quietly and waits for it: its exit status,
/// or -1 when it could not be started. For tests that set up mounts.
public func runSystemTool(_ tool: String, _ arguments: [String]) -> Int32 {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}
