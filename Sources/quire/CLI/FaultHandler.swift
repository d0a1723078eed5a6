#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import QuireLMDB
import Synchronization

/// Which message the fault handler writes; set by commands before they read the store.
private let faultMessageIndex = Atomic<Int>(0)

/// The messages, fixed at compile time: a signal handler may only call async-signal-safe code.
private let faultMessages: [StaticString] = [
    "quire: the store is corrupted; run quire verify (LMDB stopped on a damaged page)\n",
    "quire: verify: the store is corrupted: LMDB stopped on a damaged page it cannot read",
]
private let faultMessageEnd: StaticString = "; restore a backup\n"
/// An abort that did not come from LMDB's assertions: most often memory that could not be
/// allocated (the runtime has just said so above), which is no sign of damage; but a damaged
/// length could ask for such an allocation too, so verify is the way to know.
private let abortMessage: StaticString =
    "quire: aborted by the error above (most often memory that could not be allocated under a lower limit; else a damaged page of the store, or a bug); an abort loses nothing committed, and quire verify tells whether the store is damaged\n"
/// A fault away from every store map: not a page LMDB followed, so no sign of damage (most
/// often the runtime failing to report memory it could not allocate).
private let strayFaultMessage: StaticString =
    "quire: crashed on memory outside the store (most often memory that could not be allocated under a lower limit; else a damaged page of the store, or a bug); nothing committed is lost, and quire verify tells whether the store is damaged\n"
private let faultDetailLead: StaticString = " (while reading "
private let faultDetailEnd: StaticString = ")"

/// Where `verify` was reading, for the fault message: a fixed buffer (allocated once, never
/// freed) and the length of its text; written by the thread that can fault, read by its handler.
private let faultDetailCapacity = 480
nonisolated(unsafe) private let faultDetail = UnsafeMutablePointer<UInt8>.allocate(capacity: 480)
private let faultDetailLength = Atomic<Int>(0)

/// The last line of defence against a damaged store file.
///
/// LMDB trusts the pages it maps: on some damaged pages it fails an internal assertion (caught
/// by ``LMDBAssertionHook`` before its `abort()`) or follows a bad pointer (SIGSEGV, SIGBUS)
/// instead of returning an error. The handlers installed here turn those into the store's
/// corruption message and exit status 1, so `quire` never ends with a bare signal; a fault at
/// an address in no store's map (``MappedRegions``), at an instruction not LMDB's, is said not
/// to be the store's. Any other
/// SIGABRT (most often memory that could not be allocated) is said as such, with status 1, not
/// blamed on the store outright. They only call `write(2)` and `_exit(2)`.
enum FaultHandler {
    /// Which message a fault prints.
    enum Context: Int {
        /// Any command reading the store.
        case reading = 0
        /// `quire verify`, which should not advise running itself.
        case verifying = 1
    }

    /// Installs the handlers on an alternate stack (a fault may come from a corrupted stack).
    static func install() {
        // Globals initialize lazily: touch them here, never first in the handler.
        _ = faultMessages.count
        faultMessageIndex.store(0, ordering: .relaxed)
        faultDetailLength.store(0, ordering: .relaxed)
        _ = faultDetail
        MappedRegions.enable()
        let size = max(Int(SIGSTKSZ), 64 * 1024)
        if let memory = malloc(size) {
            var stack = stack_t()
            stack.ss_sp = memory
            stack.ss_size = size
            stack.ss_flags = 0
            sigaltstack(&stack, nil)
        }
        // LMDB's own assertions on damaged pages end the same way, without its `mdb.c:` line.
        LMDBAssertionHook.install { _ in reportDamagedStore() }
        for signalNumber in [SIGSEGV, SIGBUS, SIGABRT] {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_sigaction = handleFault
            #else
                action.__sigaction_u.__sa_sigaction = handleFault
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(SA_ONSTACK | SA_SIGINFO)
            sigaction(signalNumber, &action, nil)
        }
    }

    /// Chooses the message a fault prints from now on.
    static func setContext(_ context: Context) {
        faultMessageIndex.store(context.rawValue, ordering: .relaxed)
    }

    /// Says what `verify` reads now (`collection 'articles', records, after key …`), shown by the
    /// message of a fault; control characters of keys are escaped, long text is cut.
    static func setDetail(_ text: String) {
        faultDetailLength.store(0, ordering: .relaxed)
        var count = 0
        for byte in TerminalText.escaped(text).utf8 where count < faultDetailCapacity {
            faultDetail[count] = byte
            count += 1
        }
        faultDetailLength.store(count, ordering: .releasing)
    }
}

private func put(_ text: StaticString) {
    _ = text.withUTF8Buffer { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

private func handleFault(_ signalNumber: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    // An abort() outside LMDB: LMDB's own assertions reach reportDamagedStore through the hook.
    if signalNumber == SIGABRT {
        put(abortMessage)
        _exit(1)
    }
    // A damaged page makes LMDB read in (or just past) the map; a fault elsewhere is not the
    // store's, and advising a backup for it could replace a sound store by an older one.
    #if canImport(Glibc)
        let address = info.map { UInt(bitPattern: $0.pointee._sifields._sigfault.si_addr) }
    #else
        let address = info.map { UInt(bitPattern: $0.pointee.si_addr) }
    #endif
    // LMDB's own instruction faulting near null (below 1 MiB: a null pointer plus an offset) is
    // LMDB following a pointer read from a damaged page; elsewhere it could be a stack overflow
    // or a bad pointer passed in, no sign of damage. (A literal: no global is first read here.)
    if let address, address < 0x10_0000, let instruction = faultingInstruction(context),
        MappedRegions.isLMDBCode(instruction)
    {
        reportDamagedStore()
    }
    // A signal another process sent (si_code ≤ 0) has no fault address: suspected as before.
    if let info, info.pointee.si_code > 0, let address, !MappedRegions.contains(address) {
        put(strayFaultMessage)
        _exit(1)
    }
    reportDamagedStore()
}

/// The address of the instruction that faulted, from the handler's `ucontext_t`; nil where
/// this build does not know where to find it.
private func faultingInstruction(_ context: UnsafeMutableRawPointer?) -> UInt? {
    #if os(Linux) && arch(x86_64)
        guard let context else { return nil }
        // REG_RIP (16) of <sys/ucontext.h>, which Swift's Glibc module does not import. A plain
        // copy of the tuple element: a key path here could allocate, in a signal handler.
        return UInt(bitPattern: Int(context.assumingMemoryBound(to: ucontext_t.self).pointee.uc_mcontext.gregs.16))
    #elseif os(Linux) && arch(arm64)
        guard let context else { return nil }
        return UInt(context.assumingMemoryBound(to: ucontext_t.self).pointee.uc_mcontext.pc)
    #else
        return nil
    #endif
}

private func reportDamagedStore() -> Never {
    guard faultMessageIndex.load(ordering: .relaxed) == FaultHandler.Context.verifying.rawValue else {
        put(faultMessages[0])
        _exit(1)
    }
    put(faultMessages[1])
    let length = faultDetailLength.load(ordering: .acquiring)
    if length > 0 {
        put(faultDetailLead)
        _ = write(STDERR_FILENO, faultDetail, length)
        put(faultDetailEnd)
    }
    put(faultMessageEnd)
    _exit(1)
}
