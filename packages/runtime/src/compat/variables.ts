/**
 * `interpreter.variables`: the reference's live Map from variable name to its state, as a view of
 * the runtime's variable table. Entries keep their identity while their name stays declared, their
 * declaration fields follow each applied plan, and `value` always reads the current value.
 */
import { normalizeStatus, type Value } from '../values';
import type { Interpreter } from '../interpreter';
import { signatureOf } from '@lightsop/core';
import { toDescriptors, type ArgumentDescriptor } from './parse';

/** One variable, with the fields of the reference's `VariableState`. */
export class LightSOPLangVariable {
  command = '';
  arguments: ArgumentDescriptor[] = [];
  dependencies = new Set<string>();
  /** Names of the variables that reference this one, in table order. */
  dependents = new Set<string>();
  signature = '';
  comment = '';
  commentLines: string[] = [];
  /** 1-based header line; null for the implicit `input`. */
  lineNumber: number | null = null;
  /**
   * The current value record (status, timestamp, data, raw, rootCause, via, origin). Assigning a
   * value record replaces the value with the same status and data and a fresh timestamp, so that
   * dependents see it as newer at the next update.
   */
  declare value: Value;

  constructor(readonly name: string, runtime: Interpreter) {
    Object.defineProperty(this, 'value', {
      enumerable: true,
      configurable: false,
      get: (): Value | undefined => runtime.getValue(name),
      set: (next: Partial<Value> | null | undefined) => {
        const status = normalizeStatus(next?.status);
        if (!status) throw new TypeError(`Unsupported status: ${String(next?.status)}`);
        runtime.setValue(name, status, next!.data);
      },
    });
  }
}

const READ_ONLY = 'interpreter.variables is read-only; change the plan with updateCode()';

/**
 * A Map whose contents mirror the runtime's table. It rebuilds itself, at most once per applied
 * plan, when the applied source or the owner's version counter has moved since the last read.
 */
export class VariablesView extends Map<string, LightSOPLangVariable> {
  #runtime: Interpreter;
  #version: () => number;
  #seenSource: string | null = null;
  #seenVersion = -1;
  #syncing = false;

  constructor(runtime: Interpreter, version: () => number) {
    super();
    this.#runtime = runtime;
    this.#version = version;
  }

  #sync(): void {
    const source = this.#runtime.currentSourceCode;
    const version = this.#version();
    if (this.#syncing || (source === this.#seenSource && version === this.#seenVersion)) return;
    this.#syncing = true;
    try {
      const previous = new Map(super.entries());
      super.clear();
      for (const e of this.#runtime.entries()) {
        const v = previous.get(e.name) ?? new LightSOPLangVariable(e.name, this.#runtime);
        v.command = e.command;
        v.arguments = toDescriptors(e.arguments);
        v.dependencies = new Set(e.dependencies);
        v.dependents = new Set(e.dependents);
        v.signature = e.declaration ? signatureOf(e.declaration) : '';
        v.comment = e.comment;
        v.commentLines = e.commentLines.slice();
        v.lineNumber = e.declaration ? e.lineNumber : null;
        super.set(e.name, v);
      }
      this.#seenSource = source;
      this.#seenVersion = version;
    } finally {
      this.#syncing = false;
    }
  }

  override get(name: string): LightSOPLangVariable | undefined {
    this.#sync();
    return super.get(name);
  }

  override has(name: string): boolean {
    this.#sync();
    return super.has(name);
  }

  override get size(): number {
    this.#sync();
    return super.size;
  }

  override keys(): MapIterator<string> {
    this.#sync();
    return super.keys();
  }

  override values(): MapIterator<LightSOPLangVariable> {
    this.#sync();
    return super.values();
  }

  override entries(): MapIterator<[string, LightSOPLangVariable]> {
    this.#sync();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, LightSOPLangVariable]> {
    return this.entries();
  }

  override forEach(callback: (value: LightSOPLangVariable, key: string, map: Map<string, LightSOPLangVariable>) => void, thisArg?: unknown): void {
    this.#sync();
    super.forEach((value, key) => callback.call(thisArg, value, key, this));
  }

  /** What `console.log` and `util.inspect` show: the current contents. */
  [Symbol.for('nodejs.util.inspect.custom')](): Map<string, LightSOPLangVariable> {
    this.#sync();
    return new Map(super.entries());
  }

  override set(_name: string, _variable: LightSOPLangVariable): this {
    throw new TypeError(READ_ONLY);
  }

  override delete(_name: string): boolean {
    throw new TypeError(READ_ONLY);
  }

  override clear(): void {
    throw new TypeError(READ_ONLY);
  }
}
