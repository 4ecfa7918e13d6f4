// Jest runs the JavaScript tsc wrote to build/, as native ES modules (no transform).
export default { testEnvironment: 'node', transform: {}, roots: ['<rootDir>/build'] };
