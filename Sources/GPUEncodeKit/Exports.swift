// GPUEncodeKit is the pipeline layer and the library's face: `import GPUEncodeKit` gives every
// layer below it (docs/DESIGN.md, "Targets"), as one module did before the split. Batch runs are
// GPUEncodeBatch, the one layer above.
@_exported import GPUEncodeCore
@_exported import GPUEncodeFilters
@_exported import GPUEncodeMedia
@_exported import GPUEncodePresets
@_exported import GPUEncodeRender
@_exported import GPUEncodeSettings
