import Foundation
@_exported import QuireTestSupport

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
func string(_ b: UnsafeRawBufferPointer) -> String { String(decoding: b, as: UTF8.self) }
