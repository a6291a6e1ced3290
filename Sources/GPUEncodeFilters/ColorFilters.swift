// The colour family: filters over one pixel's colour (and adaptiveThreshold, which compares it
// with its neighbourhood), after GPUImage and Core Image.

public enum ColorFilters {
    public static let all: [FilterDeclaration] = [
        SepiaFilter.declaration,
        GrayscaleFilter.declaration,
        ColorMatrixFilter.declaration,
        BrightnessFilter.declaration,
        ContrastFilter.declaration,
        SaturationFilter.declaration,
        ExposureFilter.declaration,
        GammaFilter.declaration,
        RGBFilter.declaration,
        HueFilter.declaration,
        VibranceFilter.declaration,
        WhiteBalanceFilter.declaration,
        LevelsFilter.declaration,
        HighlightShadowFilter.declaration,
        ColorInvertFilter.declaration,
        MonochromeFilter.declaration,
        FalseColorFilter.declaration,
        OpacityFilter.declaration,
        LuminanceThresholdFilter.declaration,
        HazeFilter.declaration,
        ColorControlsFilter.declaration,
        HueAdjustFilter.declaration,
        AdaptiveThresholdFilter.declaration,
    ]
}
