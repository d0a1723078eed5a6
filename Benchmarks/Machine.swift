import Foundation

/// What the figures were measured on.
struct MachineInfo: Codable {
    let cores: Int
    let memory: UInt64
    let os: String
    let swiftBuildConfiguration: String

    enum CodingKeys: String, CodingKey {
        case cores, memory, os
        case swiftBuildConfiguration = "swift_build_config"
    }

    static var current: MachineInfo {
        MachineInfo(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memory: ProcessInfo.processInfo.physicalMemory,
            os: ProcessInfo.processInfo.operatingSystemVersionString,
            swiftBuildConfiguration: buildConfiguration)
    }

    static var buildConfiguration: String {
        #if DEBUG
            "debug"
        #else
            "release"
        #endif
    }
}
