import { describe, expect, it } from 'vitest';

import { IKernelLike, PANEL_MIME, WIDGET_COMM_TARGET, WIDGET_VIEW_MIME, panelData, panelIsLive } from '../src/record';

const OUTPUT = {
  'text/plain': 'KernelOPT panel',
  [WIDGET_VIEW_MIME]: { version_major: 2, version_minor: 0, model_id: 'm1' },
  [PANEL_MIME]: { model_id: 'm1', origin: 'browser-a' }
};

class FakeKernel implements IKernelLike {
  asked: string[] = [];
  constructor(
    readonly clientId: string,
    private readonly comms: Record<string, unknown> | Error
  ) {}
  async requestCommInfo(content: { target_name: string }): Promise<{ content: unknown }> {
    this.asked.push(content.target_name);
    if (this.comms instanceof Error) {
      throw this.comms;
    }
    return { content: { status: 'ok', comms: this.comms } };
  }
}

describe('panelData', () => {
  it('reads the model id from the widget view and the origin', () => {
    expect(panelData(OUTPUT)).toEqual({ modelId: 'm1', origin: 'browser-a' });
  });
  it('is null without a widget view or the panel data', () => {
    expect(panelData({ [PANEL_MIME]: { origin: 'x' } })).toBeNull();
    expect(panelData({ [WIDGET_VIEW_MIME]: { model_id: 'm1' } })).toBeNull();
    expect(panelData({ [PANEL_MIME]: {}, [WIDGET_VIEW_MIME]: { model_id: '' } })).toBeNull();
  });
});

describe('panelIsLive', () => {
  const panel = { modelId: 'm1', origin: 'browser-a' };
  it('is live at once for the connection that ran the cell, without asking', async () => {
    const kernel = new FakeKernel('browser-a', {});
    expect(await panelIsLive(panel, kernel)).toBe(true);
    expect(kernel.asked).toEqual([]);
  });
  it('asks another connection\u2019s kernel for its widget comms', async () => {
    const holding = new FakeKernel('browser-b', { m1: { target_name: WIDGET_COMM_TARGET } });
    expect(await panelIsLive(panel, holding)).toBe(true);
    expect(holding.asked).toEqual([WIDGET_COMM_TARGET]);
    expect(await panelIsLive(panel, new FakeKernel('browser-b', { m2: {} }))).toBe(false);
  });
  it('is a record with no kernel or one that cannot answer', async () => {
    expect(await panelIsLive(panel, null)).toBe(false);
    expect(await panelIsLive(panel, new FakeKernel('browser-b', new Error('dead')))).toBe(false);
    expect(await panelIsLive({ modelId: 'm1', origin: '' }, new FakeKernel('', {}))).toBe(false);
  });
});
