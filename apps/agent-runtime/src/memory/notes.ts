export interface MemoryNote {
  id: string;
  text: string;
  source: string;
  createdAt: string;
  /** Shared with the team: reached by the turns of channel members (decision 0035). */
  shared: boolean;
}

export interface MemoryHit extends MemoryNote {
  score: number;
  textScore: number;
  vectorScore: number | null;
}

/**
 * Whose notes a search or a forget may reach. Every turn reaches every note but one someone other
 * than the owner started in team chat: it reaches only the notes remembered in such turns, so
 * what the owner told the agent (in a DM, the web chat) never surfaces in a channel.
 */
export interface NoteReach {
  sharedOnly?: boolean;
}

/** Remembering one more note would pass the store's cap: nothing was stored. */
export class MemoryFullError extends Error {
  readonly maxNotes: number;
  constructor(maxNotes: number) {
    super(`Memory is full: it holds the most notes allowed (MEMORY_MAX_NOTES=${maxNotes})`);
    this.name = "MemoryFullError";
    this.maxNotes = maxNotes;
  }
}

/** A `memory_note` row as read. */
export type NoteRow = {
  rowid: number;
  id: string;
  text: string;
  source: string;
  created_at: string;
  shared: number;
};

export const toNote = (r: Omit<NoteRow, "rowid">): MemoryNote => ({
  id: r.id,
  text: r.text,
  source: r.source,
  createdAt: r.created_at,
  shared: r.shared === 1,
});
