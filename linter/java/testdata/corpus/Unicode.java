/** Columns count UTF-16 units, as checkstyle does: é is one, 😀 two. */
class Unicode {
    String s = "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"+1;
    String t = "😀😀"+" "+s;
	int café_X = 1;
}
