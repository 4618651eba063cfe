/**
 * @lightsop/runtime: executes LightSOPLang plans (sections 5 to 8 of the spec) and hosts agent
 * sessions. Builds on @lightsop/core; knows nothing of editors.
 */
export * from './skills/registry';
export * from './skills/load';
