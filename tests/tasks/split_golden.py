#!/usr/bin/env python3
"""split_golden.py — an independent implementation (std::mt19937_64 and the Fisher–Yates shuffle of
core/schema/sequence_file/SequenceFile.cpp, written from their definitions) that produced the golden
test split of tests/tasks/test_tasks.cpp splitIsFixedAndDisjoint:  python3 tests/tasks/split_golden.py
"""
M=0xFFFFFFFFFFFFFFFF
class MT64:
    def __init__(self, seed):
        self.mt=[0]*312; self.idx=312
        self.mt[0]=seed & M
        for i in range(1,312):
            self.mt[i]=(6364136223846793005*(self.mt[i-1]^(self.mt[i-1]>>62))+i)&M
    def __call__(self):
        if self.idx>=312:
            for i in range(312):
                x=(self.mt[i]&0xFFFFFFFF80000000)|(self.mt[(i+1)%312]&0x7FFFFFFF)
                xA=x>>1
                if x&1: xA^=0xB5026F5AA96619E9
                self.mt[i]=self.mt[(i+156)%312]^xA
            self.idx=0
        x=self.mt[self.idx]; self.idx+=1
        x^=(x>>29)&0x5555555555555555
        x^=(x<<17)&0x71D67FFFEDA60000
        x^=(x<<37)&0xFFF7EEE000000000
        x^=x>>43
        return x&M
r=MT64(0x53455146494c4531)
order=list(range(49))
for i in range(48,0,-1):
    j=r()%(i+1); order[i],order[j]=order[j],order[i]
assert MT64(5489)() == 14514284786278117030  # the standard's first output for the default seed
print(order[:round(0.3*49)])
