// Descriptors kept by index: the views of a run refer to one another's
// directories and mounts by index (a view inside another is reached from
// that one's mount), and Swift 6.3's Array holds no `~Copyable` element.

/// Descriptors this value owns, by the index each was appended at, each
/// closed (by its own `deinit`) when the list ends.
package struct DescriptorList: ~Copyable {
  private var storage: UnsafeMutablePointer<Descriptor>
  private var capacity: Int
  /// How many are held.
  package private(set) var count = 0

  /// An empty list with room for `capacity` descriptors before it grows.
  package init(capacity: Int = 4) {
    self.capacity = max(capacity, 1)
    storage = .allocate(capacity: self.capacity)
  }

  deinit {
    storage.deinitialize(count: count)
    storage.deallocate()
  }

  /// Takes ownership of `descriptor`, at index ``count``.
  package mutating func append(_ descriptor: consuming Descriptor) {
    if count == capacity {
      let larger = UnsafeMutablePointer<Descriptor>.allocate(capacity: capacity * 2)
      larger.moveInitialize(from: storage, count: count)
      storage.deallocate()
      storage = larger
      capacity *= 2
    }
    (storage + count).initialize(to: descriptor)
    count += 1
  }

  /// Closes the last descriptor and forgets it.
  package mutating func removeLast() {
    precondition(count > 0, "DescriptorList: removeLast of an empty list")
    count -= 1
    (storage + count).deinitialize(count: 1)
  }

  /// The descriptor at `index`, lent.
  package subscript(index: Int) -> Descriptor {
    _read {
      precondition(index >= 0 && index < count, "DescriptorList: no descriptor \(index)")
      yield storage[index]
    }
  }
}
