/// MurmurHash3 x64 128 (Austin Appleby's public-domain design), the hash postgresql-hll's `hll_hash_*` use.
public enum MurmurHash3 {
    /// The first 64 bits of the 128-bit hash of `bytes`, as `hll_hash_text`/`hll_hash_bytea` return them (seed 0).
    public static func hash64(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> Int64 {
        Int64(bitPattern: x64_128(bytes, seed: seed).0)
    }

    /// The hash of a string's UTF-8 bytes.
    public static func hash64(_ text: String, seed: UInt32 = 0) -> Int64 {
        var text = text
        return text.withUTF8 { hash64(UnsafeRawBufferPointer($0), seed: seed) }
    }

    /// Both 64-bit halves of the hash.
    public static func x64_128(_ data: UnsafeRawBufferPointer, seed: UInt32) -> (UInt64, UInt64) {
        let c1: UInt64 = 0x87c3_7b91_1142_53d5
        let c2: UInt64 = 0x4cf5_ad43_2745_937f
        var h1 = UInt64(seed)
        var h2 = UInt64(seed)
        let length = data.count
        let blocks = length / 16

        for block in 0..<blocks {
            var k1 = data.loadUnaligned(fromByteOffset: block * 16, as: UInt64.self).littleEndian
            var k2 = data.loadUnaligned(fromByteOffset: block * 16 + 8, as: UInt64.self).littleEndian
            k1 &*= c1; k1 = rotl(k1, 31); k1 &*= c2; h1 ^= k1
            h1 = rotl(h1, 27); h1 &+= h2; h1 = h1 &* 5 &+ 0x52dc_e729
            k2 &*= c2; k2 = rotl(k2, 33); k2 &*= c1; h2 ^= k2
            h2 = rotl(h2, 31); h2 &+= h1; h2 = h2 &* 5 &+ 0x3849_5ab5
        }

        let tail = blocks * 16
        let rest = length & 15
        var k1: UInt64 = 0
        var k2: UInt64 = 0
        if rest > 8 {
            for index in stride(from: rest - 1, through: 8, by: -1) {
                k2 ^= UInt64(data[tail + index]) << UInt64((index - 8) * 8)
            }
            k2 &*= c2; k2 = rotl(k2, 33); k2 &*= c1; h2 ^= k2
        }
        if rest > 0 {
            for index in stride(from: min(rest, 8) - 1, through: 0, by: -1) {
                k1 ^= UInt64(data[tail + index]) << UInt64(index * 8)
            }
            k1 &*= c1; k1 = rotl(k1, 31); k1 &*= c2; h1 ^= k1
        }

        h1 ^= UInt64(length)
        h2 ^= UInt64(length)
        h1 &+= h2
        h2 &+= h1
        h1 = fmix(h1)
        h2 = fmix(h2)
        h1 &+= h2
        h2 &+= h1
        return (h1, h2)
    }

    @inline(__always)
    private static func rotl(_ value: UInt64, _ shift: UInt64) -> UInt64 {
        (value << shift) | (value >> (64 - shift))
    }

    /// The 64-bit finalizer (fmix64): spreads every bit of `value` over the result.
    @inline(__always)
    static func fmix(_ value: UInt64) -> UInt64 {
        var k = value
        k ^= k >> 33
        k &*= 0xff51_afd7_ed55_8ccd
        k ^= k >> 33
        k &*= 0xc4ce_b9fe_1a85_ec53
        k ^= k >> 33
        return k
    }
}
