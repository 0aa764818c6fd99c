import { YNotebook } from '@jupyter/ydoc';
import { describe, expect, it } from 'vitest';

import { applyInsert, ISharedNotebookLike } from '../src/apply';
import { IInsertRequest } from '../src/protocol';

function notebook(sources: string[]): { nb: YNotebook; ids: string[] } {
  const nb = YNotebook.create({});
  nb.insertCells(
    0,
    sources.map(source => ({ cell_type: 'code' as const, source }))
  );
  // Setting up the notebook is not something the person should undo.
  nb.undoManager.clear();
  return { nb, ids: nb.cells.map(c => c.id) };
}

function request(cellId: string, extra: Partial<IInsertRequest> = {}): IInsertRequest {
  return {
    action: 'insert_cell',
    requestId: 'req-1',
    cellId,
    source: 'y = 2',
    mode: 'below',
    origin: null,
    ...extra
  };
}

// Compile-time check that the real shared notebook fits the interface applyInsert uses.
const asShared = (nb: YNotebook): ISharedNotebookLike => nb;

describe('applyInsert on a real YNotebook', () => {
  it('inserts a code cell directly below the named cell', () => {
    const { nb, ids } = notebook(['a', 'b', 'c']);
    const out = applyInsert(asShared(nb), request(ids[1]));
    expect(out).toMatchObject({ status: 'ok', index: 2 });
    expect(nb.cells.map(c => c.getSource())).toEqual(['a', 'b', 'y = 2', 'c']);
    expect(nb.cells[2].cell_type).toBe('code');
    expect(nb.cells[2].getMetadata('kernelopt')).toEqual({ request_id: 'req-1' });
  });

  it('inserts below the last cell', () => {
    const { nb, ids } = notebook(['a']);
    applyInsert(asShared(nb), request(ids[0]));
    expect(nb.cells.map(c => c.getSource())).toEqual(['a', 'y = 2']);
  });

  it('is one undoable step', () => {
    const { nb, ids } = notebook(['a', 'b']);
    nb.cells[0].setSource('a edited'); // an edit just before the click
    applyInsert(asShared(nb), request(ids[0]));
    expect(nb.cells).toHaveLength(3);
    nb.undo();
    expect(nb.cells.map(c => c.getSource())).toEqual(['a edited', 'b']);
    nb.redo();
    expect(nb.cells.map(c => c.getSource())).toEqual(['a edited', 'y = 2', 'b']);
  });

  it('replaces the source of the named cell in replace mode', () => {
    const { nb, ids } = notebook(['a', 'b']);
    const out = applyInsert(asShared(nb), request(ids[1], { mode: 'replace' }));
    expect(out).toMatchObject({ status: 'ok', index: 1 });
    expect(nb.cells.map(c => c.getSource())).toEqual(['a', 'y = 2']);
    expect(nb.cells[1].id).toBe(ids[1]);
    nb.undo();
    expect(nb.cells.map(c => c.getSource())).toEqual(['a', 'b']);
  });

  it('reports a missing cell and leaves the notebook alone', () => {
    const { nb } = notebook(['a']);
    const out = applyInsert(asShared(nb), request('nope'));
    expect(out.status).toBe('missing');
    expect(nb.cells.map(c => c.getSource())).toEqual(['a']);
  });

  it('does not insert the same request twice', () => {
    const { nb, ids } = notebook(['a', 'b']);
    applyInsert(asShared(nb), request(ids[0]));
    const again = applyInsert(asShared(nb), request(ids[0]));
    expect(again).toMatchObject({ status: 'ok', index: 1, detail: 'already inserted' });
    expect(nb.cells).toHaveLength(3);
  });
});
