/** The names of the contract's "VS Code extension surface", in one place. */
export const LANGUAGE_ID = 'lightsoplang';
export const DISPLAY_NAME = 'LightSOPLang';

export const COMMANDS = {
  runPlan: 'lightsop.runPlan',
  runToHere: 'lightsop.runToHere',
  lintWorkspace: 'lightsop.lintWorkspace',
  showGraph: 'lightsop.showGraph',
  setApiKey: 'lightsop.setApiKey',
  revealVariable: 'lightsop.revealVariable',
} as const;

export function isPlanDocument(doc: { languageId: string }): boolean {
  return doc.languageId === LANGUAGE_ID;
}
