/**
 * Applies a validated insert request to a notebook's shared model (a YNotebook).
 *
 * Editing the shared model, not the widget, makes the change undoable as one step, visible to
 * every collaborator, and independent of whether the kernel is busy.
 */

import { IInsertRequest, METADATA_KEY, placement } from './protocol';

/** The part of a shared cell this module uses (YCodeCell satisfies it). */
export interface ISharedCellLike {
  readonly id: string;
  getSource(): string;
  setSource(value: string): void;
  getMetadata(key?: string): unknown;
}

/** The part of a shared notebook this module uses (YNotebook satisfies it). */
export interface ISharedNotebookLike {
  readonly cells: readonly ISharedCellLike[];
  insertCell(
    index: number,
    cell: { cell_type: 'code'; source: string; metadata: Record<string, unknown> }
  ): unknown;
  transact(f: () => void, undoable?: boolean): void;
  readonly undoManager?: { stopCapturing(): void } | null;
}

/** What happened to a request. */
export type ApplyOutcome =
  | { status: 'ok'; index: number; detail: string }
  | { status: 'missing'; detail: string };

/** Whether a cell already records this request (a retried or repeated request). */
function recordsRequest(cell: ISharedCellLike, requestId: string): boolean {
  const meta = cell.getMetadata(METADATA_KEY);
  return (
    typeof meta === 'object' &&
    meta !== null &&
    (meta as Record<string, unknown>).request_id === requestId
  );
}

/**
 * Insert the request's source as a code cell directly below the cell it names, or replace that
 * cell's source. Returns `missing` when no cell has the id. A request id already recorded in
 * the notebook is not applied twice.
 */
export function applyInsert(nb: ISharedNotebookLike, req: IInsertRequest): ApplyOutcome {
  const ids = nb.cells.map(c => c.id);
  const where = placement(ids, req.cellId, req.mode);
  if (where.kind === 'missing') {
    return { status: 'missing', detail: `no cell with id ${req.cellId}` };
  }
  if (req.mode === 'below') {
    const existing = nb.cells.findIndex(c => recordsRequest(c, req.requestId));
    if (existing >= 0) {
      return { status: 'ok', index: existing, detail: 'already inserted' };
    }
  }
  // Separate undo steps: without this, Yjs merges edits made within its capture timeout
  // (typing just before the click) with ours, and one undo would revert both.
  nb.undoManager?.stopCapturing();
  nb.transact(() => {
    if (where.kind === 'insert') {
      nb.insertCell(where.index, {
        cell_type: 'code',
        source: req.source,
        metadata: { [METADATA_KEY]: { request_id: req.requestId } }
      });
    } else {
      nb.cells[where.index].setSource(req.source);
    }
  });
  nb.undoManager?.stopCapturing();
  const detail =
    where.kind === 'insert'
      ? `inserted cell at index ${where.index}`
      : `replaced source of cell ${req.cellId}`;
  return { status: 'ok', index: where.index, detail };
}
