/**
 * The Hamming distances from one code to every code of the index, computed by a small
 * WebAssembly function with 128-bit SIMD: per 16 bytes of code one xor, one byte-wise popcount
 * and one widening add, where a scalar scan needs 4 word xors and 8 table lookups. At 100k codes
 * of 1024 bits the scan is the largest part of a memory search.
 *
 * The module is a few dozen instructions, assembled here from its opcodes (no build step, no
 * binary in the tree). Its one function reads a linear memory the index owns:
 *
 *   distances(codes, count, vectors, query, out)
 *     for s in 0..count:
 *       acc = 0 (eight u16 lanes)
 *       for v in 0..vectors: acc += pairwise_u(popcnt(load(codes) ^ load(query + 16 v))); codes += 16
 *       out[s] = sum of acc's lanes (u16)
 */

const I32 = 0x7f;
const V128 = 0x7b;

/** Unsigned LEB128, as wasm encodes sizes, counts and indices. */
function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
const name = (text: string) => [...leb(text.length), ...Array.from(text, (c) => c.charCodeAt(0))];
const simd = (opcode: number) => [0xfd, ...leb(opcode)];

// Instructions (https://webassembly.github.io/spec/core/binary/instructions.html).
const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const i32 = (value: number) => [0x41, ...leb(value)];
const ADD = [0x6a];
const SHL = [0x74];
const EQ = [0x46];
const brIf = (depth: number) => [0x0d, depth];
const br = (depth: number) => [0x0c, depth];
const BLOCK = [0x02, 0x40];
const LOOP = [0x03, 0x40];
const END = [0x0b];
const V128_LOAD = [...simd(0x00), 4, 0]; // align 2^4, offset 0
const V128_ZERO = [...simd(0x0c), ...new Array(16).fill(0)];
const V128_XOR = simd(0x51);
const I8X16_POPCNT = simd(0x62);
const I16X8_EXTADD_PAIRWISE_U = simd(0x7d);
const I32X4_EXTADD_PAIRWISE_U = simd(0x7f);
const I16X8_ADD = simd(0x8e);
const lane = (index: number) => [...simd(0x1b), index]; // i32x4.extract_lane
const STORE16 = [0x3b, 1, 0]; // i32.store16 align 2^1, offset 0

// Parameters 0-4, then locals: s, v (i32), acc, sum (v128).
const [CODES, COUNT, VECTORS, QUERY, OUT, S, V, ACC, SUM] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

// biome-ignore format: one line per step of the loop above
const body = [
  ...[2, 2, I32, 2, V128], // two i32 locals, two v128 locals
  ...BLOCK, ...LOOP, // for s in 0..count
  ...get(S), ...get(COUNT), ...EQ, ...brIf(1),
  ...V128_ZERO, ...set(ACC),
  ...i32(0), ...set(V),
  ...BLOCK, ...LOOP, // for v in 0..vectors
  ...get(V), ...get(VECTORS), ...EQ, ...brIf(1),
  ...get(ACC),
  ...get(CODES), ...V128_LOAD,
  ...get(QUERY), ...get(V), ...i32(4), ...SHL, ...ADD, ...V128_LOAD,
  ...V128_XOR, ...I8X16_POPCNT, ...I16X8_EXTADD_PAIRWISE_U, ...I16X8_ADD, ...set(ACC),
  ...get(CODES), ...i32(16), ...ADD, ...set(CODES),
  ...get(V), ...i32(1), ...ADD, ...set(V),
  ...br(0), ...END, ...END,
  ...get(ACC), ...I32X4_EXTADD_PAIRWISE_U, ...set(SUM),
  ...get(OUT), ...get(S), ...i32(1), ...SHL, ...ADD, // the address of out[s]
  ...get(SUM), ...lane(0), ...get(SUM), ...lane(1), ...ADD, ...get(SUM), ...lane(2), ...ADD, ...get(SUM), ...lane(3), ...ADD,
  ...STORE16,
  ...get(S), ...i32(1), ...ADD, ...set(S),
  ...br(0), ...END, ...END,
  ...END,
];

const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]), // type: (i32 × 5) → ()
  ...section(2, [1, ...name("env"), ...name("memory"), 0x02, 0x00, 1]), // import env.memory, min 1 page
  ...section(3, [1, 0]), // one function of type 0
  ...section(7, [1, ...name("distances"), 0x00, 0]), // export it
  ...section(10, [1, ...leb(body.length), ...body]),
]);

const PAGE = 65536;

/** The part of the WebAssembly JS API used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Memory: new (descriptor: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

type Distances = (codes: number, count: number, vectors: number, query: number, out: number) => void;
let compiled: object | undefined;

/**
 * Codes in a wasm memory, `stride` bytes each (the code's bytes padded with zeros to a multiple
 * of 16, which adds nothing to a distance), then the query, then the distances.
 */
export class HammingScan {
  readonly stride: number;
  readonly #memory: WasmMemory;
  readonly #distances: Distances;
  #capacity = 0;
  #bytes: Uint8Array;

  constructor(codeBytes: number, capacity: number) {
    this.stride = Math.ceil(codeBytes / 16) * 16;
    this.#memory = new Wasm.Memory({ initial: 1 });
    compiled ??= new Wasm.Module(MODULE);
    const instance = new Wasm.Instance(compiled, { env: { memory: this.#memory } });
    this.#distances = instance.exports.distances as Distances;
    this.#bytes = new Uint8Array(this.#memory.buffer);
    this.reserve(capacity);
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Room for `capacity` codes (the memory only grows; the codes stay where they are). */
  reserve(capacity: number): void {
    if (capacity <= this.#capacity) return;
    const needed = this.#layout(capacity).end;
    const pages = Math.ceil(needed / PAGE) - this.#memory.buffer.byteLength / PAGE;
    if (pages > 0) this.#memory.grow(pages);
    this.#bytes = new Uint8Array(this.#memory.buffer);
    this.#capacity = capacity;
  }

  /** Writes the code of a slot (shorter than the stride: the rest is zeros). */
  write(slot: number, code: Uint8Array): void {
    const at = slot * this.stride;
    this.#bytes.fill(0, at, at + this.stride);
    this.#bytes.set(code.subarray(0, this.stride), at);
  }

  /** Moves the code of slot `from` into slot `to`. */
  move(from: number, to: number): void {
    this.#bytes.copyWithin(to * this.stride, from * this.stride, (from + 1) * this.stride);
  }

  /** The distances of the first `count` slots to `query`, as a view valid until the next call. */
  distances(query: Uint8Array, count: number): Uint16Array {
    const { query: q, out } = this.#layout(this.#capacity);
    this.#bytes.fill(0, q, q + this.stride);
    this.#bytes.set(query.subarray(0, this.stride), q);
    this.#distances(0, count, this.stride / 16, q, out);
    return new Uint16Array(this.#memory.buffer, out, count);
  }

  /** Codes from 0, then the query, then the distances (u16, 2-byte aligned as the codes are 16). */
  #layout(capacity: number): { query: number; out: number; end: number } {
    const query = capacity * this.stride;
    const out = query + this.stride;
    return { query, out, end: out + capacity * 2 };
  }
}
