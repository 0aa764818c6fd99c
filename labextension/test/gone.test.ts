import { describe, expect, it } from 'vitest';

import { BANNER_CLASS, GONE_CLASS, IElementLike, goneMessage, markPanelsGone } from '../src/gone';

class FakeElement implements IElementLike {
  classes = new Set<string>();
  children: FakeElement[] = [];
  textContent: string | null = null;
  disabled?: boolean;
  title?: string;
  style?: { color: string };
  constructor(
    readonly tag: string,
    classes: string[] = [],
    children: FakeElement[] = []
  ) {
    classes.forEach(c => this.classes.add(c));
    this.children = children;
  }
  get classList() {
    return { contains: (n: string) => this.classes.has(n), add: (n: string) => void this.classes.add(n) };
  }
  private all(): FakeElement[] {
    return this.children.flatMap(c => [c, ...c.all()]);
  }
  private matches(selector: string): boolean {
    return selector
      .split(',')
      .map(s => s.trim())
      .some(s => (s.startsWith('.') ? this.classes.has(s.slice(1)) : this.tag === s));
  }
  querySelectorAll(selector: string): FakeElement[] {
    return this.all().filter(e => e.matches(selector));
  }
  querySelector(selector: string): FakeElement | null {
    return this.querySelectorAll(selector)[0] ?? null;
  }
  prepend(node: IElementLike): void {
    this.children.unshift(node as FakeElement);
  }
}

function panel(folder: string | null): FakeElement {
  const header = new FakeElement('div', ['kernelopt-header']);
  if (folder !== null) {
    const hidden = new FakeElement('span', ['kernelopt-outdir']);
    hidden.textContent = folder;
    header.children.push(hidden);
  }
  return new FakeElement('div', ['kernelopt-panel'], [
    header,
    new FakeElement('button', ['kernelopt-accept']),
    new FakeElement('textarea')
  ]);
}

const banner = (text: string): FakeElement => {
  const el = new FakeElement('div', [BANNER_CLASS]);
  el.textContent = text;
  return el;
};

describe('markPanelsGone on a session that was still going', () => {
  function livePanel(status: string): { p: FakeElement; word: FakeElement; badge: FakeElement } {
    const word = new FakeElement('span', ['kernelopt-status']);
    word.textContent = status;
    word.style = { color: '#1a7f37' };
    const badge = new FakeElement('button', ['kernelopt-gate', 'kernelopt-gate-fail']);
    badge.title = 'correctness: fail — call 1: max abs err 3.0';
    const p = panel('runs/x');
    p.children[0].children.push(word);
    p.children.push(badge);
    return { p, word, badge };
  }

  it('ends the header status instead of leaving it "running"', () => {
    const { p, word } = livePanel('running');
    markPanelsGone(new FakeElement('div', [], [p]), 'restarted', banner);
    expect(word.textContent).toBe('ended: the kernel restarted');
    expect(word.style?.color).not.toBe('#1a7f37');
  });

  it('leaves a finished status as it was', () => {
    const { p, word } = livePanel('finished');
    markPanelsGone(new FakeElement('div', [], [p]), 'shut down', banner);
    expect(word.textContent).toBe('finished');
  });

  it('takes back the offers of a pause nobody can answer', () => {
    const { p } = livePanel('paused');
    const message = new FakeElement('div', ['kernelopt-message']);
    message.textContent = 'Paused after planner step 3: Next/Approve to continue.';
    p.children.push(message);
    markPanelsGone(new FakeElement('div', [], [p]), 'restarted', banner);
    expect(message.textContent).toBe('The search was paused here when its kernel went.');
  });

  it("keeps a gate badge's diagnostic as its tooltip", () => {
    const { p, badge } = livePanel('paused');
    markPanelsGone(new FakeElement('div', [], [p]), 'restarted', banner);
    expect(badge.disabled).toBe(true);
    expect(badge.title).toBe('correctness: fail — call 1: max abs err 3.0');
  });
});

describe('markPanelsGone', () => {
  it('disables every control, explains why and names the reopen command', () => {
    const p = panel('runs/softmax-0101');
    const root = new FakeElement('div', [], [p]);
    expect(markPanelsGone(root, 'restarted', banner)).toBe(1);
    expect(p.classes.has(GONE_CLASS)).toBe(true);
    const controls = p.querySelectorAll('button, textarea');
    expect(controls.every(c => c.disabled === true)).toBe(true);
    const first = p.children[0];
    expect(first.classes.has(BANNER_CLASS)).toBe(true);
    expect(first.textContent).toContain('has restarted');
    expect(first.textContent).toContain('%kernelopt open runs/softmax-0101 --resume');
    expect(controls[0].title).toBe(first.textContent);
  });

  it('marks a panel once, however many times the kernel goes', () => {
    const root = new FakeElement('div', [], [panel('runs/x')]);
    expect(markPanelsGone(root, 'restarted', banner)).toBe(1);
    expect(markPanelsGone(root, 'shut down', banner)).toBe(0);
    expect(root.querySelectorAll('.' + BANNER_CLASS)).toHaveLength(1);
  });

  it('points to the sessions list when the panel does not know its folder', () => {
    expect(goneMessage(null, 'shut down')).toContain('%kernelopt sessions');
    const root = new FakeElement('div', [], [panel(null)]);
    markPanelsGone(root, 'shut down', banner);
    expect(root.querySelector('.' + BANNER_CLASS)?.textContent).toContain('open DIR --resume');
  });
});
