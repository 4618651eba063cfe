// Issue 10 item 3: whatever a skill throws or returns, even a value that cannot be converted to text
// or that throws on every access, becomes the outcome of that one command; the run never crashes and
// the results of the commands running beside it are kept. Through a registry, a skills map and the
// compat entry point, with a fast-check property over arbitrary values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import LightSOPLangInterpreter from '@lightsop/runtime/compat';
import { Interpreter, dataText, publicForm, registryFromSkillsMap, type CommandRegistry, type RunEvent, type Status } from '@lightsop/runtime';
import { testRegistry, type Handler } from '../helpers/registry';

const STATUSES: readonly Status[] = ['success', 'fail', 'undefined', 'canceled'];

/** A Proxy whose every trap throws: reading, converting, testing or listing it all throw. */
function hostileProxy(target: object = {}): object {
  const trap = () => {
    throw new Error('trapped');
  };
  return new Proxy(target, {
    get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap,
    defineProperty: trap, set: trap, deleteProperty: trap, isExtensible: trap, preventExtensions: trap, setPrototypeOf: trap,
  });
}

function cyclic(): object {
  const o: Record<string, unknown> = { name: 'loop' };
  o.self = o;
  return o;
}

/** Values a hostile or careless skill may throw or return, each built fresh. */
const HOSTILE: Record<string, () => unknown> = {
  'a null-prototype object': () => Object.create(null),
  'a symbol': () => Symbol('sym'),
  'undefined': () => undefined,
  'null': () => null,
  'a proxy that throws on every trap': () => hostileProxy(),
  'a proxy of a function that throws on every trap': () => hostileProxy(() => 1),
  'an object whose toString throws': () => ({ toString() { throw new Error('no text'); } }),
  'an object whose toPrimitive returns an object': () => ({ [Symbol.toPrimitive]: () => ({}) }),
  'an Error whose message getter throws': () => Object.defineProperty(new Error('x'), 'message', { get() { throw new Error('no message'); } }),
  'an Error whose message is a null-prototype object': () => Object.assign(new Error('x'), { message: Object.create(null) }),
  'a bigint': () => 10n ** 30n,
  'a cyclic object': cyclic,
  'an object whose status getter throws': () => ({ raw: 'r', get status() { throw new Error('status getter'); } }),
  'an object whose raw getter throws': () => ({ status: 'success', get raw() { throw new Error('raw getter'); } }),
  'an object whose then getter throws': () => ({ get then() { throw new Error('then getter'); } }),
  'a thenable whose then throws': () => ({ then() { throw Object.create(null); } }),
  'a native promise whose constructor getter throws': () => Object.defineProperty(Promise.resolve('x'), 'constructor', { get() { throw new Error('constructor getter'); } }),
  'a value record with a null-prototype status': () => ({ status: Object.create(null), raw: 'r', data: 'd' }),
  'a value record whose keys cannot be listed': () => new Proxy({ status: 'success', raw: 'r', data: 'd' }, { ownKeys() { throw new Error('no keys'); } }),
  'a success record with hostile data': () => ({ status: 'success', raw: 'r', data: hostileProxy() }),
  'a fail record with null-prototype data': () => ({ status: 'fail', raw: 'r', data: Object.create(null) }),
  'a canceled record with a hostile root cause': () => ({ status: 'canceled', raw: 'r', data: 'd', rootCause: hostileProxy() }),
  'a record with a non-finite timestamp getter that throws': () => ({ status: 'success', raw: 'r', data: 'd', get timestamp() { throw new Error('ts'); } }),
};

/** How a command hands the value back: thrown, returned, or given to a responder method. */
const DELIVERIES: Record<string, (value: unknown) => Handler> = {
  thrown: (value) => () => {
    throw value;
  },
  'thrown asynchronously': (value) => async () => {
    await Promise.resolve();
    throw value;
  },
  returned: (value) => () => value,
  'given to success': (value) => (_p, r) => r.success(value),
  'given to fail': (value) => (_p, r) => r.fail(value),
  'given to cancel': (value) => (_p, r) => r.cancel(value),
};

/** Runs `@a emit x`, `@b hostile`, `@c emit after $b`, `@d slow` and checks that nothing escaped. */
async function runHostile(registryOf: (slow: Promise<void>) => CommandRegistry) {
  const events: RunEvent[] = [];
  let finishSlow: () => void = () => undefined;
  const slow = new Promise<void>((resolve) => (finishSlow = resolve));
  const interpreter = new Interpreter({ registry: registryOf(slow), onEvent: (e) => events.push(e) });
  const update = interpreter.updateCode('@a emit x\n@b hostile\n@c emit after $b\n@d slow\n');
  // The slow command is still running when the hostile one settles: its result must be kept.
  setImmediate(finishSlow);
  const result = await update;
  expect(result.aborted).toBe(false);
  expect(interpreter.getVarValue('a')).toBe('x');
  expect(interpreter.getVarValue('d')).toBe('slow done');
  const b = interpreter.getValue('b')!;
  expect(STATUSES).toContain(b.status);
  // Every text form of every value is a string, and reading them throws nothing.
  for (const entry of interpreter.entries()) {
    expect(typeof dataText(entry.value)).toBe('string');
    expect(typeof entry.value.raw).toBe('string');
    if (entry.value.status !== 'success') expect(typeof publicForm(entry.value)).toBe('string');
  }
  expect(() => interpreter.snapshot()).not.toThrow();
  for (const e of events) if (e.type === 'variable-settled') expect(typeof e.value).toBe('string');
  // Its dependent never starts unless it succeeded, and follows it the usual way (6.5).
  if (b.status !== 'success') expect(interpreter.getValue('c')!.status).toBe(b.status === 'canceled' ? 'canceled' : 'undefined');
  return { interpreter, b, events };
}

/** A registry (form (a)) whose `hostile` command runs `handler`. */
const viaRegistry = (handler: Handler) => (slow: Promise<void>) => testRegistry({
  hostile: handler,
  slow: async (_p, r) => {
    await slow;
    return r.success('slow done');
  },
});

/** A skills map (form (b)) whose `hostile` skill runs `run`. */
const viaSkillsMap = (run: () => unknown) => (slow: Promise<void>) => registryFromSkillsMap({
  emit: { description: 'joins its arguments', run: (args) => args.join(' ') },
  slow: { description: 'waits', run: async () => {
    await slow;
    return 'slow done';
  } },
  hostile: { description: 'hostile', run },
});

describe('hostile values from a skill never crash a run', () => {
  for (const [valueName, make] of Object.entries(HOSTILE)) {
    for (const [delivery, deliver] of Object.entries(DELIVERIES)) {
      it(`${valueName}, ${delivery}, through a registry`, async () => {
        await runHostile(viaRegistry(deliver(make())));
      });
    }
    it(`${valueName}, returned and thrown by a skills map's run`, async () => {
      await runHostile(viaSkillsMap(() => make()));
      await runHostile(viaSkillsMap(() => {
        throw make();
      }));
    });
  }

  it('a thrown null-prototype object is a failure with a readable reason, and its dependents wait', async () => {
    const { interpreter, b } = await runHostile(viaRegistry(DELIVERIES.thrown!(Object.create(null))));
    expect(b.status).toBe('fail');
    expect(interpreter.getVarValue('b')).toBe('fail:[object Object]');
    expect(interpreter.getVarValue('c')).toBe('undefined:waiting for b');
  });

  it('a thrown symbol and a thrown undefined keep the spec\'s String() form', async () => {
    const sym = await runHostile(viaRegistry(DELIVERIES.thrown!(Symbol('sym'))));
    expect(sym.interpreter.getVarValue('b')).toBe('fail:Symbol(sym)');
    const undef = await runHostile(viaRegistry(DELIVERIES.thrown!(undefined)));
    expect(undef.interpreter.getVarValue('b')).toBe('fail:undefined');
  });

  it('a result whose status getter throws is an invalid result that says why', async () => {
    const { interpreter, b } = await runHostile(viaRegistry(DELIVERIES.returned!(HOSTILE['an object whose status getter throws']!())));
    expect(b.status).toBe('fail');
    expect(interpreter.getVarValue('b')).toBe('fail:invalid result from executeCommand (reading it threw: status getter)');
  });

  it('success data that cannot be converted to text is kept as given', async () => {
    const data = Object.create(null) as Record<string, unknown>;
    data.k = 1;
    const { interpreter, b, events } = await runHostile(viaRegistry(DELIVERIES['given to success']!(data)));
    expect(b.status).toBe('success');
    expect(interpreter.getVarValue('b')).toBe(data);
    expect(b.raw).toMatch(/^\d+:success:\[object Object\]$/);
    // The dependent receives the data unchanged; its command line shows the String() form (Q16).
    expect(events).toContainEqual(expect.objectContaining({ type: 'command-started', variable: 'c', raw: 'emit after [object Object]' }));
    expect(interpreter.getVarValue('c')).toBe('after');
  });

  it('property: any value thrown or returned settles its own command and keeps the others', async () => {
    const anything = fc.anything({ withBigInt: true, withNullPrototype: true, withObjectString: true, withMap: true, withSet: true, withBoxedValues: true, withDate: true, withTypedArray: true, withSparseArray: true });
    // Hostile values are built inside the property: fast-check itself cannot hold a Proxy that throws.
    const value = fc.oneof(anything.map((v) => ({ make: () => v })), fc.constantFrom(...Object.keys(HOSTILE)).map((name) => ({ make: HOSTILE[name]! })));
    await fc.assert(
      fc.asyncProperty(value, fc.constantFrom(...Object.keys(DELIVERIES)), async ({ make }, delivery) => {
        await runHostile(viaRegistry(DELIVERIES[delivery]!(make())));
      }),
      { numRuns: 300 },
    );
  }, 60000);
});

describe('hostile values through the compat entry point', () => {
  for (const [valueName, make] of Object.entries(HOSTILE)) {
    it(`${valueName}, thrown and returned`, async () => {
      for (const deliver of [DELIVERIES.thrown!, DELIVERIES.returned!, DELIVERIES['given to fail']!]) {
        const handler = deliver(make());
        const registry = {
          listCommands: () => [{ name: 'emit', description: 'e' }, { name: 'hostile', description: 'h' }],
          executeCommand: (p: { command: string; args: unknown[] }, r: { success(d: unknown): unknown }) => (p.command === 'emit' ? r.success(p.args[0]) : handler(p as never, r as never)),
        };
        const interpreter = new LightSOPLangInterpreter('@a emit x\n@b hostile\n@c emit $b', registry);
        await interpreter.ready;
        expect(interpreter.getVarValue('a')).toBe('x');
        const b = interpreter.variables.get('b')!.value;
        expect(STATUSES).toContain(b.status);
        expect(typeof b.raw).toBe('string');
      }
    });
  }
});
