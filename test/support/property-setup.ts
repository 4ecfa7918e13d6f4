import fc from 'fast-check';
import { propertyMode } from './property.ts';

/*
 * vitest's setup file: the fixed seed (or PROPERTY_SEED) for every fast-check run a test starts without
 * one of its own, `fc.assert` calls included; exploring leaves it random (property.ts).
 */
const { seed } = propertyMode();
if (seed !== undefined) fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
