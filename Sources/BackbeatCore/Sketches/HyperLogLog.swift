#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A HyperLogLog sketch of distinct listeners, bit-compatible with postgresql-hll's `hll` type
/// with log2m 14 (16384 registers: about 0.8% standard error), register width 5, automatic explicit threshold
/// and sparse on, i.e. `hll(14, 5)`.
///
/// Up to 1280 distinct hashes it keeps the hashes themselves (postgresql-hll's EXPLICIT mode: exact counts); beyond
/// that, 16384 five-bit registers. Its state depends only on the set of hashes added, so it is the same whatever the
/// order of adds and unions, and `cardinality` computes exactly what `hll_cardinality` computes in SQL.
public struct HyperLogLog: Equatable, Sendable {
    public static let log2m = 14
    public static let registerWidth = 5
    public static let registerCount = 1 << log2m
    /// postgresql-hll's automatic explicit threshold: as many 8-byte hashes as fit in the packed registers.
    public static let explicitLimit = (registerWidth * registerCount + 7) / 8 / 8

    enum Storage: Equatable, Sendable {
        case empty
        /// Distinct hashes, sorted as signed integers.
        case explicit([Int64])
        /// One value per register.
        case registers([UInt8])
    }

    var storage: Storage = .empty

    public init() {}

    /// The sketch of `hashes`, distinct and sorted as signed integers: what adding each of them one by one gives.
    public init(sortedDistinctHashes hashes: [Int64]) {
        if hashes.isEmpty { return }
        if hashes.count <= Self.explicitLimit {
            storage = .explicit(hashes)
            return
        }
        var registers = [UInt8](repeating: 0, count: Self.registerCount)
        registers.withUnsafeMutableBufferPointer { registers in
            for hash in hashes { Self.update(registers, with: hash) }
        }
        storage = .registers(registers)
    }

    /// Adds a listener id (hashed as `hll_hash_text` does).
    public mutating func add(_ id: String) {
        add(hash: MurmurHash3.hash64(id))
    }

    /// Adds a 64-bit hash.
    public mutating func add(hash: Int64) {
        switch storage {
        case .empty:
            storage = .explicit([hash])
        case .explicit(var hashes):
            let position = hashes.insertionPoint(of: hash)
            if position < hashes.count && hashes[position] == hash { return }
            if hashes.count == Self.explicitLimit {
                var registers = [UInt8](repeating: 0, count: Self.registerCount)
                for existing in hashes { Self.update(&registers, with: existing) }
                Self.update(&registers, with: hash)
                storage = .registers(registers)
            } else {
                storage = .empty  // release the array so the insert does not copy it
                hashes.insert(hash, at: position)
                storage = .explicit(hashes)
            }
        case .registers(var registers):
            storage = .empty
            Self.update(&registers, with: hash)
            storage = .registers(registers)
        }
    }

    /// Adds every element of `other`.
    public mutating func formUnion(_ other: HyperLogLog) {
        switch other.storage {
        case .empty:
            return
        case .explicit(let theirs):
            switch storage {
            case .empty:
                storage = other.storage
            case .explicit(let mine):
                // A linear merge of two sorted sets; beyond the explicit limit, registers from the union.
                let union = Self.sortedUnion(mine, theirs)
                if union.count > Self.explicitLimit {
                    var registers = [UInt8](repeating: 0, count: Self.registerCount)
                    for hash in union { Self.update(&registers, with: hash) }
                    storage = .registers(registers)
                } else {
                    storage = .explicit(union)
                }
            case .registers(var registers):
                storage = .empty  // keep the registers uniquely referenced while they change
                registers.withUnsafeMutableBufferPointer { registers in
                    for hash in theirs { Self.update(registers, with: hash) }
                }
                storage = .registers(registers)
            }
        case .registers(let theirs):
            switch storage {
            case .empty:
                storage = other.storage
            case .explicit(let hashes):
                var registers = theirs
                for hash in hashes { Self.update(&registers, with: hash) }
                storage = .registers(registers)
            case .registers(var mine):
                storage = .empty
                mine.withUnsafeMutableBufferPointer { mine in
                    theirs.withUnsafeBufferPointer { theirs in
                        for index in 0..<mine.count { mine[index] = max(mine[index], theirs[index]) }
                    }
                }
                storage = .registers(mine)
            }
        }
    }

    /// Whether nothing was added.
    public var isEmpty: Bool { storage == .empty }

    /// The estimated number of distinct elements, computed as postgresql-hll's `hll_cardinality` does
    /// (exact in explicit mode).
    public var cardinality: Double {
        switch storage {
        case .empty:
            return 0
        case .explicit(let hashes):
            return Double(hashes.count)
        case .registers(let registers):
            let m = Double(Self.registerCount)
            // The sum of 2^-register, as integers counted in 2^-31ths: every term is a whole number of them and
            // 16,384 terms of at most 2^31 fit in 45 bits, so the integer sum (one the compiler vectorizes) is
            // exact, and so equals postgresql-hll's sum of doubles term by term (each of its partial sums fits in
            // a double's 53 bits: it rounds nothing either).
            var scaled: UInt64 = 0
            var zeros = 0
            registers.withUnsafeBufferPointer { registers in
                for value in registers {
                    scaled &+= UInt64(1) &<< (31 &- UInt64(value & 31))
                    zeros &+= Int((value &- 1) >> 7)  // 1 for a register of 0 (it wraps to 255), else 0: no branch
                }
            }
            let sum = Double(scaled) / Double(UInt64(1) << 31)
            let gamma = (0.7213 / (1.0 + 1.079 / m)) * m * m
            let estimator = gamma / sum
            let pwBits = (1 << Self.registerWidth) - 2
            let twoToL = Double(UInt64(1) << UInt64(pwBits + Self.log2m))
            if zeros != 0 && estimator < 5.0 * m / 2.0 {
                return m * log(m / Double(zeros))
            } else if estimator <= twoToL / 30.0 {
                return estimator
            } else {
                return -twoToL * log(1.0 - estimator / twoToL)
            }
        }
    }

    /// The sorted, duplicate-free union of two sorted, duplicate-free arrays.
    static func sortedUnion(_ a: [Int64], _ b: [Int64]) -> [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] {
                result.append(a[i]); i += 1
            } else if b[j] < a[i] {
                result.append(b[j]); j += 1
            } else {
                result.append(a[i]); i += 1; j += 1
            }
        }
        result.append(contentsOf: a[i...])
        result.append(contentsOf: b[j...])
        return result
    }

    /// Register index from the low bits, value = 1 + trailing zeros of the rest (0 when the rest is 0), capped.
    @inline(__always)
    static func update(_ registers: inout [UInt8], with hash: Int64) {
        registers.withUnsafeMutableBufferPointer { update($0, with: hash) }
    }

    @inline(__always)
    static func update(_ registers: UnsafeMutableBufferPointer<UInt8>, with hash: Int64) {
        let bits = UInt64(bitPattern: hash)
        let index = Int(bits & UInt64(registerCount - 1))
        let rest = bits >> UInt64(log2m)
        let value = rest == 0 ? 0 : min(rest.trailingZeroBitCount + 1, (1 << registerWidth) - 1)
        if registers[index] < UInt8(value) { registers[index] = UInt8(value) }
    }
}

extension Array where Element == Int64 {
    /// The first index whose element is not less than `value` (the array is sorted).
    func insertionPoint(of value: Int64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension HyperLogLog {
    /// Approximate heap bytes this sketch holds, for memory budgets.
    public var byteCount: Int {
        switch storage {
        case .empty: 0
        case .explicit(let hashes): 32 + hashes.count * 8
        case .registers(let registers): 32 + registers.count
        }
    }
}
