// Threshold decisions made in exact arithmetic, so that every renderer decides every pixel alike.
//
// why: a filter whose output jumps at a threshold (black or white, outline or colour) turns a
// rounding difference into a jump of up to 255 code values. On 8-bit pictures such ties are common
// (testsrc2's flat colours give Sobel magnitudes exactly at toon's 0.2), and float arithmetic
// decided them differently on NVIDIA (fused multiply-adds, its own square root) and llvmpipe: toon
// differed in 0.9% of the pixels. Here the quantities a decision compares are integers: a colour's
// 8-bit codes, its Rec. 709 luminance in units of 1/2550000 (weights in 1/10000, codes in 1/255),
// sums of those, and squares as two 24-bit limbs, so the comparison has one answer. A threshold
// parameter enters as the float product `t * 2550000.0`, one IEEE multiplication, the same on
// every GPU. Pictures deeper than 8 bits (half-float intermediates) are decided on their colours
// rounded to 8-bit codes.

enum ExactDecisionGLSL {
    /// `{{p}}codes(c)`: the 8-bit codes of a colour; `{{p}}lumaUnits(c)`: its Rec. 709 luminance in
    /// units of 1/2550000 (GPUImage's weights 0.2125, 0.7154, 0.0721 to four places, exactly);
    /// `{{p}}units(t)`: a threshold in those units; `{{p}}reaches(gx, gy, t)`: whether the length of
    /// (gx, gy) (luminance units, each below 2^24 in size) is at least `{{p}}units(t)`;
    /// `{{p}}sumOfSquares` and `{{p}}notBelow` compare sums of squares exactly.
    static let helpers = """
    ivec3 {{p}}codes(vec3 c) { return ivec3(floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5)); }
    int {{p}}lumaUnits(vec3 c) { ivec3 k = {{p}}codes(c); return 2125 * k.r + 7154 * k.g + 721 * k.b; }
    float {{p}}units(float t) { return t * 2550000.0; }
    // a * a as (high, low): a = h * 2^12 + l, a * a = high * 2^24 + low, low below 2^24 (0 <= a < 2^24).
    ivec2 {{p}}square(int a) {
        int h = a >> 12;
        int l = a & 4095;
        int mid = 2 * h * l;
        int low = l * l + ((mid & 4095) << 12);
        int high = h * h + (mid >> 12) + (low >> 24);
        return ivec2(high, low & 16777215);
    }
    // a² + b² as (high, low) limbs (|a|, |b| below 2^24).
    ivec2 {{p}}sumOfSquares(int a, int b) {
        ivec2 x = {{p}}square(abs(a));
        ivec2 y = {{p}}square(abs(b));
        int low = x.y + y.y;
        return ivec2(x.x + y.x + (low >> 24), low & 16777215);
    }
    // x >= y for two (high, low) numbers.
    bool {{p}}notBelow(ivec2 x, ivec2 y) { return x.x > y.x || (x.x == y.x && x.y >= y.y); }
    bool {{p}}reaches(int gx, int gy, float t) {
        // 16 (gx² + gy²) >= (4 T)², T = units(t): 4 T is an integer (T is below 2^22, so its float
        // has at most two bits below the point).
        ivec2 g = {{p}}sumOfSquares(gx, gy);
        ivec2 s = ivec2((g.x << 4) | (g.y >> 20), (g.y << 4) & 16777215);
        return {{p}}notBelow(s, {{p}}square(int(4.0 * {{p}}units(t))));
    }
    """
}
