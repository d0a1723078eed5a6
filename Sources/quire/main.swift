#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

StandardDescriptors.ensureOpen()
// First: until it is installed, a fault (or a signal) goes to the Swift runtime's backtracer,
// which starts a helper program and can leave the process waiting on it.
FaultHandler.install()
if let reason = DescriptorLimit.settle() {
    Diagnostics.error(reason)
    exit(ExitStatus.failure)
}
// A closed pipe must not kill us mid-write: EPIPE comes back from write(2) instead, and
// `quire dump | head -1` ends quietly with status 0.
signal(SIGPIPE, SIG_IGN)
// A write past the file size limit (`ulimit -f`) must not dump core: EFBIG comes back instead,
// a typed error with the store intact.
signal(SIGXFSZ, SIG_IGN)
InterruptFlag.install()
if let reason = ThreadStartProbe.failure() {
    Diagnostics.error(reason)
    exit(ExitStatus.failure)
}

let status = await EntryPoint.run(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status)
