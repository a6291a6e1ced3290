// The colour family: point filters over one pixel's colour, after GPUImage and Core Image.

public enum ColorFilters {
    public static let all: [FilterDeclaration] = [
        SepiaFilter.declaration,
        GrayscaleFilter.declaration,
        ColorMatrixFilter.declaration,
        BrightnessFilter.declaration,
        ContrastFilter.declaration,
        SaturationFilter.declaration,
    ]
}
