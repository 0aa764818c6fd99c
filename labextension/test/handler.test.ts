import { YNotebook } from '@jupyter/ydoc';
import { describe, expect, it } from 'vitest';

import { ISharedNotebookLike } from '../src/apply';
import { handleRequest, IHandleInput } from '../src/handler';

function notebook(sources: string[]): YNotebook {
  const nb = YNotebook.create({});
  nb.insertCells(
    0,
    sources.map(source => ({ cell_type: 'code' as const, source }))
  );
  return nb;
}

function input(data: unknown, extra: Partial<IHandleInput> = {}): IHandleInput {
  return { data, parentSession: null, clientId: 'me', notebooks: () => [], ...extra };
}

const insert = (cellId: string, extra: Record<string, unknown> = {}) => ({
  action: 'insert_cell',
  request_id: 'r1',
  cell_id: cellId,
  source: 'new = 1',
  mode: 'below',
  ...extra
});

describe('handleRequest', () => {
  it('answers an invalid request with an error naming the problem', () => {
    expect(handleRequest(input({ action: 'insert_cell', request_id: 'r9' }))).toEqual({
      request_id: 'r9',
      status: 'error',
      detail: 'cell_id must be a non-empty string'
    });
  });

  it('answers a ping', () => {
    expect(handleRequest(input({ action: 'ping', request_id: 'p' }))?.status).toBe('ok');
  });

  it("stays silent on another browser's request, by origin or by parent session", () => {
    const nb = notebook(['a']);
    const notebooks = () => [nb as ISharedNotebookLike];
    const id = nb.cells[0].id;
    expect(handleRequest(input(insert(id, { origin: 'them' }), { notebooks }))).toBeNull();
    expect(handleRequest(input(insert(id), { notebooks, parentSession: 'them' }))).toBeNull();
    expect(nb.cells).toHaveLength(1);
  });

  it('acts on its own request; the explicit origin wins over the parent session', () => {
    const nb = notebook(['a']);
    const id = nb.cells[0].id;
    const reply = handleRequest(
      input(insert(id, { origin: 'me' }), {
        notebooks: () => [nb],
        parentSession: 'someone-else'
      })
    );
    expect(reply).toMatchObject({ request_id: 'r1', status: 'ok' });
    expect(nb.cells.map(c => c.getSource())).toEqual(['a', 'new = 1']);
  });

  it('edits the notebook that holds the cell', () => {
    const first = notebook(['x']);
    const second = notebook(['y', 'z']);
    const id = second.cells[0].id;
    const reply = handleRequest(input(insert(id), { notebooks: () => [first, second] }));
    expect(reply?.status).toBe('ok');
    expect(first.cells).toHaveLength(1);
    expect(second.cells.map(c => c.getSource())).toEqual(['y', 'new = 1', 'z']);
  });

  it('reports a cell that no notebook has, and a kernel without notebooks', () => {
    const nb = notebook(['x']);
    expect(handleRequest(input(insert('gone'), { notebooks: () => [nb] }))?.detail).toContain(
      'no cell with id gone'
    );
    expect(handleRequest(input(insert('gone')))?.detail).toBe(
      'no open notebook uses this kernel'
    );
  });
});
