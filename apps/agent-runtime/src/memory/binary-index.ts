/**
 * Sign-bit codes of the note vectors, kept in process memory (128 bytes a note at 1024
 * dimensions: 12.8 MB at 100k notes). A Hamming scan over them picks the candidates that the
 * stored float vectors then rank exactly. sqlite-vec's own bit KNN reads the codes through its
 * chunk tables on every query, which cost hundreds of milliseconds at 100k notes; a SIMD scan of
 * the codes in memory (hamming-scan.ts) costs a few.
 */
import { HammingScan } from "./hamming-scan.ts";

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
  readonly #bytes: number;
  readonly #scan: HammingScan;
  #rowids: Float64Array;
  readonly #slots = new Map<number, number>();

  /** `dimensions`: of the vectors; a multiple of 8. */
  constructor(dimensions: number) {
    this.#bytes = dimensions / 8;
    this.#scan = new HammingScan(this.#bytes, 1024);
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
    this.#scan.write(slot, code.subarray(0, this.#bytes));
  }

  delete(rowid: number): void {
    const slot = this.#slots.get(rowid);
    if (slot === undefined) return;
    // The last code moves into the freed slot, so the scanned range stays dense.
    const last = this.#slots.size - 1;
    if (slot !== last) {
      const moved = this.#rowids[last] as number;
      this.#scan.move(last, slot);
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
    const distances = this.#scan.distances(binaryCode(vector), size);
    // Distances are at most the dimension count: a histogram of them finds the cut-off distance
    // of the n nearest without sorting the whole corpus.
    const histogram = new Uint32Array(this.#bytes * 8 + 1);
    for (let s = 0; s < size; s++) {
      const d = distances[s] as number;
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
    this.#scan.reserve(this.#rowids.length * 2);
    const rowids = new Float64Array(this.#rowids.length * 2);
    rowids.set(this.#rowids);
    this.#rowids = rowids;
  }
}
