public enum GPUEncodeVersion {
    public static let string = "0.1.0"
}
