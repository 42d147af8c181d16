/**
 * Cedar a page of policies or policy versions carries at most. A body may be 256 KiB and a page
 * 200 items: 51 MB read from the database and serialized for one request, which any member could
 * repeat. A page stops before the item that would pass this, and always holds at least one.
 */
export const MAX_PAGE_CEDAR_BYTES = 1024 * 1024;

/** How many items, of these sizes in page order, the page takes (at most `limit`). */
export function pageLength(sizes: readonly (number | string)[], limit: number): number {
  let total = 0;
  let take = 0;
  for (const size of sizes.slice(0, limit)) {
    total += Number(size);
    if (take > 0 && total > MAX_PAGE_CEDAR_BYTES) break;
    take++;
  }
  return take;
}
