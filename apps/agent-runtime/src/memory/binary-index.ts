/**
 * Sign-bit codes of the note vectors, kept in process memory (128 bytes a note at 1024
 * dimensions: 12.8 MB at 100k notes). A Hamming scan over them picks the candidates that the
 * stored float vectors then rank exactly. sqlite-vec's own bit KNN reads the codes through its
 * chunk tables on every query, which cost hundreds of milliseconds at 100k notes; a scan of a
 * typed array in memory costs a few.
 */

/** Set bits of every 16-bit value: two lookups per 32-bit word of a code. */
const POPCOUNT16 = (() => {
  const table = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) table[i] = (table[i >> 1] as number) + (i & 1);
  return table;
})();

/**
 * The code of a vector: bit i is set when component i is positive, least significant bit first
 * within each byte, the layout of sqlite-vec's `vec_quantize_binary` (codes stored by either are
 * interchangeable).
 */
export function binaryCode(vector: Float32Array): Uint8Array {
  const code = new Uint8Array(Math.ceil(vector.length / 8));
  for (let i = 0; i < vector.length; i++) {
    if ((vector[i] as number) > 0) code[i >> 3] = (code[i >> 3] as number) | (1 << (i & 7));
  }
  return code;
}

export class BinaryIndex {
  readonly #words: number;
  #codes: Int32Array;
  #rowids: Float64Array;
  readonly #slots = new Map<number, number>();

  /** `dimensions`: of the vectors; a multiple of 32. */
  constructor(dimensions: number) {
    this.#words = dimensions / 32;
    this.#codes = new Int32Array(1024 * this.#words);
    this.#rowids = new Float64Array(1024);
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Adds or replaces the code of a note (a `binaryCode` or sqlite-vec's bit vector). */
  set(rowid: number, code: Uint8Array): void {
    let slot = this.#slots.get(rowid);
    if (slot === undefined) {
      slot = this.#slots.size;
      if (slot === this.#rowids.length) this.#grow();
      this.#slots.set(rowid, slot);
      this.#rowids[slot] = rowid;
    }
    const words = new Int32Array(code.buffer.slice(code.byteOffset, code.byteOffset + this.#words * 4));
    this.#codes.set(words, slot * this.#words);
  }

  delete(rowid: number): void {
    const slot = this.#slots.get(rowid);
    if (slot === undefined) return;
    // The last code moves into the freed slot, so the scanned range stays dense.
    const last = this.#slots.size - 1;
    if (slot !== last) {
      const moved = this.#rowids[last] as number;
      this.#codes.copyWithin(slot * this.#words, last * this.#words, (last + 1) * this.#words);
      this.#rowids[slot] = moved;
      this.#slots.set(moved, slot);
    }
    this.#slots.delete(rowid);
  }

  clear(): void {
    this.#slots.clear();
  }

  /** The `n` notes nearest to the vector by Hamming distance of the codes (ties in any order). */
  nearest(vector: Float32Array, n: number): number[] {
    const size = this.#slots.size;
    if (size <= n) return Array.from(this.#rowids.subarray(0, size));
    const words = this.#words;
    const q = new Int32Array(binaryCode(vector).buffer);
    const codes = this.#codes;
    const distances = new Uint16Array(size);
    // Distances are at most the dimension count: a histogram of them finds the cut-off distance
    // of the n nearest without sorting the whole corpus.
    const histogram = new Uint32Array(words * 32 + 1);
    for (let s = 0, base = 0; s < size; s++, base += words) {
      let d = 0;
      for (let w = 0; w < words; w++) {
        const x = ((codes[base + w] as number) ^ (q[w] as number)) >>> 0;
        d += (POPCOUNT16[x & 0xffff] as number) + (POPCOUNT16[x >>> 16] as number);
      }
      distances[s] = d;
      histogram[d] = (histogram[d] as number) + 1;
    }
    let cutoff = 0;
    for (let seen = 0; cutoff < histogram.length; cutoff++) {
      seen += histogram[cutoff] as number;
      if (seen >= n) break;
    }
    const below: number[] = [];
    const at: number[] = [];
    for (let s = 0; s < size; s++) {
      const d = distances[s] as number;
      if (d < cutoff) below.push(this.#rowids[s] as number);
      else if (d === cutoff && below.length + at.length < n) at.push(this.#rowids[s] as number);
    }
    return below.concat(at.slice(0, n - below.length));
  }

  #grow(): void {
    const codes = new Int32Array(this.#codes.length * 2);
    codes.set(this.#codes);
    this.#codes = codes;
    const rowids = new Float64Array(this.#rowids.length * 2);
    rowids.set(this.#rowids);
    this.#rowids = rowids;
  }
}
