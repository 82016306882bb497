import SystemPackage

/// The whole of a small file (sweep's rules file, /proc/self/mountinfo);
/// one larger than `limit` bytes is `EFBIG` (`--rules /dev/zero` aborted
/// the run for want of memory).
package func readWholeFile(_ path: FilePath, limit: Int = 1 << 20) throws(Errno) -> [UInt8] {
  let descriptor: FileDescriptor
  do {
    descriptor = try FileDescriptor.open(path, .readOnly, options: .closeOnExec)
  } catch let error as Errno {
    throw error
  } catch {
    throw .ioError
  }
  defer { try? descriptor.close() }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 64 * 1024)
  while true {
    let count: Int
    do {
      count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
    } catch let error as Errno {
      throw error
    } catch {
      throw .ioError
    }
    if count == 0 { return bytes }
    bytes += chunk[..<count]
    if bytes.count > limit { throw .fileTooLarge }
  }
}
