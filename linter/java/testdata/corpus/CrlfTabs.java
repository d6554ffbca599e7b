package fleetkit.sample;

import java.util.List;

class crlf_tabs {
	int x = 1;  
	void f() {
		if (x > 0)	return;
		int  y	= x;
	}
	// a comment that is rather long, and with tabs it is longer than eighty
}