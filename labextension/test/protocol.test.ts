import { describe, expect, it } from 'vitest';

import { isForThisClient, makeReply, parseRequest, pathMessage, placement } from '../src/protocol';

const valid = {
  action: 'insert_cell',
  request_id: 'r1',
  cell_id: 'c1',
  source: 'x = 1',
  mode: 'below'
};

describe('parseRequest', () => {
  it('accepts a well-formed insert request', () => {
    const parsed = parseRequest(valid);
    expect(parsed).toEqual({
      ok: true,
      request: {
        action: 'insert_cell',
        requestId: 'r1',
        cellId: 'c1',
        source: 'x = 1',
        mode: 'below',
        origin: null
      }
    });
  });

  it('defaults the mode to below and keeps the origin', () => {
    const { mode: _mode, ...rest } = valid;
    const parsed = parseRequest({ ...rest, origin: 'sess' });
    expect(parsed.ok && parsed.request.action === 'insert_cell' && parsed.request.mode).toBe(
      'below'
    );
    expect(parsed.ok && parsed.request.origin).toBe('sess');
  });

  it('accepts replace and an empty source', () => {
    const parsed = parseRequest({ ...valid, mode: 'replace', source: '' });
    expect(parsed.ok).toBe(true);
  });

  it('accepts a ping', () => {
    expect(parseRequest({ action: 'ping', request_id: 'p' })).toEqual({
      ok: true,
      request: { action: 'ping', requestId: 'p', origin: null }
    });
  });

  it.each([
    [null, 'not a JSON object'],
    [[1, 2], 'not a JSON object'],
    [{ ...valid, request_id: 3 }, 'request_id'],
    [{ ...valid, action: 'delete_cell' }, 'unknown action'],
    [{ ...valid, cell_id: '' }, 'cell_id'],
    [{ ...valid, source: 5 }, 'source'],
    [{ ...valid, mode: 'above' }, 'mode']
  ])('rejects %j naming the problem', (data, fragment) => {
    const parsed = parseRequest(data);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain(fragment);
    }
  });

  it('keeps the request id of an invalid request for the reply', () => {
    const parsed = parseRequest({ ...valid, mode: 'sideways' });
    expect(!parsed.ok && parsed.requestId).toBe('r1');
  });
});

describe('placement', () => {
  const ids = ['a', 'b', 'c'];
  it('inserts directly below the named cell', () => {
    expect(placement(ids, 'a', 'below')).toEqual({ kind: 'insert', index: 1 });
    expect(placement(ids, 'c', 'below')).toEqual({ kind: 'insert', index: 3 });
  });
  it('replaces the named cell', () => {
    expect(placement(ids, 'b', 'replace')).toEqual({ kind: 'replace', index: 1 });
  });
  it('reports a missing cell', () => {
    expect(placement(ids, 'zz', 'below')).toEqual({ kind: 'missing' });
    expect(placement([], 'a', 'replace')).toEqual({ kind: 'missing' });
  });
});

describe('isForThisClient', () => {
  it('acts on requests without an origin or from this browser only', () => {
    expect(isForThisClient(null, 'me')).toBe(true);
    expect(isForThisClient('me', 'me')).toBe(true);
    expect(isForThisClient('someone-else', 'me')).toBe(false);
  });
});

describe('makeReply', () => {
  it('uses the wire field names', () => {
    expect(makeReply('r', 'error', 'why')).toEqual({
      request_id: 'r',
      status: 'error',
      detail: 'why'
    });
  });
});

describe('pathMessage', () => {
  it('tells the kernel the path before a %%kernelopt cell', () => {
    expect(pathMessage('%%kernelopt --budget 4\nimport torch', 'work/renamed.ipynb')).toEqual({
      path: 'work/renamed.ipynb'
    });
    expect(pathMessage('\n  %%kernelopt', 'a.ipynb')).toEqual({ path: 'a.ipynb' });
  });

  it('sends nothing for other cells or without a path', () => {
    expect(pathMessage('x = 1', 'a.ipynb')).toBeNull();
    expect(pathMessage('%kernelopt sessions', 'a.ipynb')).toBeNull();
    expect(pathMessage('%%kernelopt', '')).toBeNull();
  });
});
