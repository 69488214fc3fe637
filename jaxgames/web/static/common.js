function x(){}
